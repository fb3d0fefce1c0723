#include "experiments/reports/report_inputs.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "core/error.h"
#include "core/platform/process/shell_quote.h"
#include "experiments/outputs/last_session.h"

namespace tn {

namespace {
namespace fs = std::filesystem;

constexpr const char* kExpected =
    "expected a sweep folder (with sweep.json, written by `transnormer sweep`) or a run directory "
    "(with config.yaml, written by `transnormer train`)";

/// A run directory given alone that no process holds and that has no summary: "stopped" when
/// run.json says its last session was stopped by a signal or was still running (its process was
/// killed), with a problems line saying how to go on: the resume command, or, for a smoke test
/// (which keeps no checkpoint), to run it again.
void describe_unfinished(RunRecord& run) {
  if (run.state != "incomplete") return;
  const LastSession last = last_session(run.dir);
  if (last.outcome != "stopped" && last.outcome != "running") return;
  run.state = "stopped";
  const std::string how = last.outcome == "stopped" ? "stopped by a signal" : "killed (its process ended without a word)";
  std::error_code ec;
  if (last.smoke() || !fs::exists(fs::path(run.dir) / "checkpoint.safetensors", ec)) {
    run.problems.push_back(how + " before it finished, with no checkpoint to resume from" +
                           (last.smoke() ? " (a smoke test keeps none): run it again" : ": train it again"));
    return;
  }
  run.problems.push_back(how + " before its last step; continue it with `transnormer train --resume " +
                         shell_quote(fs::absolute(run.dir, ec).lexically_normal().string()) + "`");
}

/// The run of one sweep point: its directory's files, then the sweep's word on its state.
RunRecord read_point(const fs::path& folder, const PointRecord& point, size_t source) {
  RunRecord run = read_run_dir((folder / point.dir).string());
  run.point = point.name;
  run.overrides = nlohmann::json::parse(point.overrides.dump());
  run.sweep_wall_s = point.wall_s;
  run.sweep_jobs = point.jobs;
  run.sweep_threads = point.threads;
  run.source = source;
  for (const auto& item : point.overrides.items())  // a point that wrote no config.yaml keeps its paper values
    if (item.key().rfind("paper.", 0) == 0 && item.value().is_number() && !run.paper.count(item.key().substr(6)))
      run.paper[item.key().substr(6)] = item.value().get<double>();
  // The sweep's error line, unless a problem read from the run directory already says it (the
  // message of diverged.json, with its step).
  if (!point.error.empty() && std::none_of(run.problems.begin(), run.problems.end(), [&](const std::string& p) {
        return p.find(point.error) != std::string::npos;
      }))
    run.problems.insert(run.problems.begin(), point.error);
  const bool readable = run.state != "unreadable";
  if (point.state == PointState::Done) {
    if (!run.summary && readable) {
      run.state = "incomplete";
      run.problems.push_back(run.dir + ": the sweep reports it done, but it has no summary.json");
    }
  } else {
    run.state = to_string(point.state);
  }
  if (!run.seed && run.overrides.contains("train.seed") && run.overrides["train.seed"].is_number_integer() &&
      run.overrides["train.seed"].get<int64_t>() >= 0)
    run.seed = run.overrides["train.seed"].get<uint64_t>();
  return run;
}
}  // namespace

ReportInputs read_report_inputs(const std::vector<std::string>& dirs) {
  if (dirs.empty()) throw ConfigError(std::string("report needs at least one DIR: ") + kExpected);
  ReportInputs inputs;
  std::map<std::string, std::string> seen;  // canonical run directory -> as first given (or read from a sweep)
  auto first_time = [&](const std::string& run_dir, const std::string& given) {
    std::error_code ec;
    const std::string key = fs::weakly_canonical(run_dir, ec).string();
    const auto [it, fresh] = seen.emplace(ec ? run_dir : key, given);
    if (!fresh)
      spdlog::warn("report: the run {} is read already (from {}): read once, so its seed counts once", run_dir,
                   it->second);
    return fresh;
  };
  std::map<std::string, std::string> seen_dirs;  // canonical DIR -> as first given
  for (const std::string& given : dirs) {
    const fs::path dir(given);
    if (!fs::is_directory(dir))
      throw DataError(given + ": " + (fs::exists(dir) ? "not a directory" : "no such directory") + "; " + kExpected);
    std::error_code ec;
    if (const auto [it, fresh] = seen_dirs.emplace(fs::canonical(dir, ec).string(), given); !fresh) {
      spdlog::warn("report: {} is given twice (also as {}): read once", given, it->second);
      continue;
    }
    const size_t index = inputs.sources.size();
    ReportSource source{given, std::nullopt};
    if (fs::is_regular_file(dir / "sweep.json")) {
      source.sweep = read_sweep_index((dir / "sweep.json").string());
      for (const PointRecord& point : source.sweep->points)
        if (first_time((dir / point.dir).string(), given)) inputs.runs.push_back(read_point(dir, point, index));
    } else if (fs::is_regular_file(dir / "config.yaml")) {
      if (!first_time(given, given)) continue;
      RunRecord run = read_run_dir(given);
      describe_unfinished(run);
      run.source = index;
      inputs.runs.push_back(std::move(run));
    } else {
      throw DataError(given + ": neither sweep.json nor config.yaml is there; " + kExpected);
    }
    inputs.sources.push_back(std::move(source));
  }
  return inputs;
}

}  // namespace tn
