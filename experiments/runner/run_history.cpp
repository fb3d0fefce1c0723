#include "experiments/runner/run_history.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "core/io/atomic_file.h"
#include "core/math/isa_clones.h"
#include "core/version.h"

namespace tn {

namespace {

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  return ::gethostname(buf, sizeof buf - 1) == 0 ? std::string(buf) : std::string();
}

}  // namespace

RunHistory::RunHistory(std::string dir, const RunInvocation& invocation, int threads, bool resume)
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

}  // namespace tn
