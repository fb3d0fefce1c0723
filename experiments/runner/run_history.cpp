#include "experiments/runner/run_history.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <cstdlib>
#include <fstream>

#include "core/platform/io/atomic_file.h"
#include "core/runtime/math/isa_clones.h"
#include "core/platform/system.h"
#include "core/platform/version.h"

namespace tn {

namespace {

std::string host_name() {
  char buf[256] = {};
  return ::gethostname(buf, sizeof buf - 1) == 0 ? std::string(buf) : std::string();
}

/// How this process was started: {"name": "slurm", "job": "1234", "array_task": "0"} under
/// Slurm (its job id, and the array task's), {"name": "mpirun"} under Open MPI, else "direct".
nlohmann::json launcher() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? v : "";
  };
  if (const std::string job = env("SLURM_JOB_ID"); !job.empty()) {
    nlohmann::json out = {{"name", "slurm"}, {"job", job}};
    if (const std::string array = env("SLURM_ARRAY_JOB_ID"); !array.empty()) out["array_job"] = array;
    if (const std::string task = env("SLURM_ARRAY_TASK_ID"); !task.empty()) out["array_task"] = task;
    return out;
  }
  if (!env("OMPI_COMM_WORLD_SIZE").empty()) return {{"name", "mpirun"}};
  return {{"name", "direct"}};
}

}  // namespace

RunHistory::RunHistory(std::string dir, const RunInvocation& invocation, int threads, int ranks, bool resume)
    : path_((std::filesystem::path(dir) / "run.json").string()) {
  doc_ = {{"sessions", nlohmann::json::array()}};
  if (resume && std::filesystem::exists(path_)) {
    std::ifstream in(path_);
    const nlohmann::json old = nlohmann::json::parse(in, nullptr, false);
    if (old.is_object() && old.contains("sessions") && old["sessions"].is_array())
      doc_ = old;
    else
      spdlog::warn("{}: not a run history (a JSON object with \"sessions\"); starting it anew", path_);
  }
  doc_["sessions"].push_back({{"command", invocation.command},
                              {"overrides", invocation.overrides},
                              {"version", program_version()},
                              {"host", host_name()},
                              {"threads", threads},
                              {"ranks", ranks},
                              {"launcher", launcher()},
                              {"kernel_isa", kernel_isa()},
                              {"started", utc_now()},
                              {"ended", nullptr},
                              {"outcome", "running"}});
  write_own_file(path_, doc_.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", "a run");
}

void RunHistory::finish(const std::string& outcome) {
  nlohmann::json& session = doc_["sessions"].back();
  session["ended"] = utc_now();
  session["outcome"] = outcome;
  write_own_file(path_, doc_.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", "a run");
}

void RunHistory::withdraw() {
  if (!doc_["sessions"].empty()) doc_["sessions"].erase(doc_["sessions"].size() - 1);
  write_own_file(path_, doc_.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", "a run");
}

}  // namespace tn
