#pragma once
// One run directory as `report` sees it (docs/cli/run-folder.md): its resolved config, its
// summary when it finished, its curves from metrics.jsonl and its locality curve when it has a
// locality.json. Nothing here knows what the task is: metrics are the names the files hold.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "experiments/outputs/run_summary.h"

namespace tn {

/// Values by step, in the order logged (steps increasing in a well-formed file).
struct StepCurve {
  std::vector<double> step, value;
};

/// locality.json's "mean" curve: l(r) averaged over layers, on the grid "r".
struct LocalityCurve {
  std::vector<double> r, l;
};

struct RunRecord {
  std::string dir;  // the run directory, as given or as the sweep folder joined with its "dir"
  /// done | failed | diverged (from a sweep, or a diverged.json without summary.json) | pending |
  /// running (from a sweep, or a run folder a training process holds now) | stopped (a run folder
  /// given alone whose last session was stopped or killed: read_report_inputs, its problems saying
  /// how to go on) | incomplete (no summary.json yet, or a sweep point reported done without one) |
  /// unreadable (summary.json is malformed).
  /// Only done runs enter the pooled statistics.
  std::string state;
  std::vector<std::string> problems;  // the sweep's error, files that could not be read

  nlohmann::json config;  // config.yaml as JSON; null when absent or unreadable
  /// config.yaml's leaves except paper: ("model.d_model", 128), in key order.
  std::vector<std::pair<std::string, nlohmann::json>> flat_config;
  std::map<std::string, double> paper;  // config.yaml `paper:` flattened ("test.ppl" -> 31.01)
  std::optional<RunSummary> summary;
  std::vector<std::string> count_metrics;  // metrics written as integers ("valid.tokens")
  std::vector<std::pair<std::string, double>> analysis;  // numeric leaves of summary "analysis"
  std::optional<uint64_t> seed;  // summary train.seed, else config train.seed, else the override

  StepCurve train_loss;                   // training-log lines' loss
  /// The last training-log line's step and training seconds so far (both 0 before the first),
  /// and config.yaml's train.max_steps (0 when unknown): a run's progress and ETA.
  int64_t logged_step = 0, max_steps = 0;
  double logged_train_s = 0;
  std::map<std::string, StepCurve> evals;  // "valid.ppl" -> evaluation values by step
  std::optional<LocalityCurve> locality;

  // Sweep points only.
  std::string point;         // the point's name in sweep.json
  nlohmann::json overrides;  // the point's own overrides (train.seed included); null otherwise
  std::optional<double> sweep_wall_s;
  std::optional<int> sweep_jobs, sweep_threads;  // the sweep's --jobs and --threads-per-job at its launch
  size_t source = 0;  // index of the DIR argument it came from

  bool done() const { return state == "done" && summary.has_value(); }
  /// The final value of "split.metric", or nullopt.
  std::optional<double> final_metric(const std::string& name) const;
};

/// Reads whatever run directory `dir` holds (config.yaml, summary.json, diverged.json,
/// metrics.jsonl, locality.json; a missing directory gives an empty record). state is "done" when
/// summary.json reads, "unreadable" when it is malformed, "diverged" when it is absent and the
/// runner left a diverged.json ({"step", "error"}), else "incomplete". Never throws for a
/// file of the run: each one that cannot be read adds a line to `problems` naming it and the
/// reason (and a warning on the log).
RunRecord read_run_dir(const std::string& dir);

}  // namespace tn
