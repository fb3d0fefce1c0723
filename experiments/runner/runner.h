#pragma once
// The runner: one training loop for every task (experiments/tasks/task.h). It owns the step loop
// (AdamW, the schedule, clipping and update_freq through TrainStep), the evaluation schedule
// (valid every train.eval_every steps and at the end, each followed by a checkpoint and train
// state; test every train.test_every and at the end), resume, divergence handling, progress logs
// with ETA, metrics.jsonl and summary.json. It knows nothing about what the task computes.
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "core/platform/comm/communicator.h"
#include "experiments/outputs/run_summary.h"
#include "experiments/runner/run_history.h"
#include "experiments/spec/spec.h"
#include "experiments/tasks/task.h"

namespace tn {

struct RunOptions {
  std::string out_dir;    // run directory (created)
  std::string data_root;  // where relative data paths are taken from
  bool resume = false;    // continue the run in out_dir from its last checkpoint (--resume)
  /// A new run in a folder that holds one deletes that run's files first (--overwrite); without
  /// it, such a folder is refused (ConfigError) before anything is written.
  bool overwrite = false;
  /// Write the records (config, metrics, summary, log) but no checkpoint, best checkpoint or train
  /// state: a smoke test's scratch folder (train --smoke), which is neither resumed nor evaluated.
  bool records_only = false;
  RunInvocation invocation;  // the command line and overrides, for run.json
  /// Called with the run directory once the run has passed its checks (spec, data, memory, the
  /// folder's claim or resume) and the folder exists, before its first file is written: the CLI
  /// starts DIR/train.log there. Empty: nothing.
  std::function<void(const std::string& dir)> on_run_dir;
  /// Polled after every step and between evaluations: a nonzero signal number stops the run there,
  /// with a checkpoint and train state of that step (TrainingInterrupted); the evaluations not yet
  /// run are run by `--resume`. Empty: never stop.
  std::function<int()> stop_requested;
  /// The ranks that train this run together (data parallelism: the app passes the MPI world);
  /// null: this process alone.
  Communicator* ranks = nullptr;
};

/// Raised when the loss, the gradient norm or a weight stops being finite; the run directory
/// keeps the last good checkpoint, and records the failure in diverged.json ({"step", "error"}).
struct TrainingDiverged : std::runtime_error {
  TrainingDiverged(int64_t step, const std::string& what) : std::runtime_error(what), step(step) {}
  int64_t step;  // the step whose loss, gradient or update was not finite
};

/// Raised when RunOptions::stop_requested asked the run to stop: the step in progress finished
/// and its checkpoint and train state are written, so `--resume` continues exactly.
struct TrainingInterrupted : std::runtime_error {
  TrainingInterrupted(int signal, const std::string& what) : std::runtime_error(what), signal(signal) {}
  int signal;  // the signal number that asked for the stop (SIGTERM, SIGINT)
};

/// Runs the whole training job of `spec` and returns its summary (also written to the run
/// directory, with config.yaml, metrics.jsonl, checkpoint.safetensors and
/// train_state.safetensors). Progress goes to spdlog (stderr). Throws ConfigError/DataError for
/// bad input (including a run that cannot fit in memory), TrainingDiverged when training diverges,
/// TrainingInterrupted when options.stop_requested stopped it.
RunSummary run_training(const ExperimentSpec& spec, const RunOptions& options);

/// The command that continues the run in `path`: `transnormer train --resume PATH`, with
/// `--data-root ROOT` when the run's data root is not the one a plain command would find
/// ($TRANSNORMER_DATA, else ./datasets). Quoted for a POSIX shell.
std::string resume_command(const std::string& path, const std::string& data_root);

/// The same with a task built by the caller (tests; tasks outside the registry). `task` must be
/// the task of `spec`.
RunSummary run_training(const ExperimentSpec& spec, const RunOptions& options, std::unique_ptr<Task> task);

}  // namespace tn
