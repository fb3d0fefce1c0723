#pragma once
// The run directory (docs/cli/run-folder.md): config.yaml, metrics.jsonl, summary.json,
// checkpoint.safetensors, train_state.safetensors. Every file is written atomically (write, then
// rename).
#include <nlohmann/json.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "experiments/outputs/metrics.h"
#include "experiments/outputs/run_summary.h"

namespace tn {

/// Written when training diverged: {"step", "error"} (`sweep` and `report` mark the run diverged).
inline constexpr const char* kDivergedFile = "diverged.json";

/// Whether the folder `path` holds a run: its config.yaml, metrics.jsonl, summary.json or
/// checkpoint. (A train.log alone does not count: a sweep writes one before the run starts.)
bool holds_run(const std::string& path);

/// Whether the folder `path` has the records of a run that wrote its files: a run.json that reads
/// as a run history, or a metrics.jsonl whose every line is a metrics record (what a run folder
/// kept by scripts/keep_run_records.sh has).
bool holds_run_record(const std::string& path);

/// Throws ConfigError (exit 2) naming the file when a name a run writes in `path` (its files,
/// train.log, predictions/ and the .jsonl files in it) is there as a symbolic link, FIFO, device,
/// socket or folder: a run writes only its own regular files (never through a link, which would
/// write or truncate the link's target, nor into a FIFO, whose open would block for good).
void check_run_files(const std::string& path);

/// The checks before a run writes in `path`, writing nothing: ConfigError (exit 2) when its files
/// are not regular files (check_run_files), when resuming a folder that does not exist, when
/// starting a new run in a folder that holds one without `overwrite` (the message names --resume
/// and --overwrite), or when it holds files of a run's names that no run wrote (no run record:
/// neither kept nor deleted, with or without `overwrite`), when `path` is a sweep folder (it holds
/// sweep.json), and, for a `smoke` test, when the run it holds is not a smoke test's (even with
/// `overwrite`: a smoke test never deletes a real run).
void check_run_dir(const std::string& path, bool resume, bool overwrite, bool smoke);

/// check_run_dir, then, for a new run with `overwrite` in a folder holding one, deletes that
/// run's files (clear_run).
void claim_run_dir(const std::string& path, bool resume, bool overwrite, bool smoke);

/// Deletes the files a run writes in `path` (config.yaml, metrics.jsonl, summary.json, run.json,
/// diverged.json, the checkpoints and train states, predictions/), never the folder itself nor
/// anything else in it. A symlink among them is removed, not followed. train.log stays: the new
/// run's log replaces it (`train` truncates it; a sweep's child writes it as its stderr).
void clear_run(const std::string& path);

class RunDir {
 public:
  /// Creates `path` (and parents). Throws DataError when it cannot.
  explicit RunDir(std::string path);
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const;

  /// Appends one record as a line of metrics.jsonl (rewritten atomically each time).
  void append_metrics(const TrainRecord& record) { append_line(record.to_json()); }
  void append_metrics(const EvalRecord& record) { append_line(record.to_json()); }
  /// For a resumed run: reads metrics.jsonl back, keeping the records of steps <= step (those a
  /// run killed after its last checkpoint wrote later are dropped; with keep_evals_at_step false,
  /// also the evaluations of `step` itself, to be redone), and rewrites it atomically. Throws
  /// DataError naming the file and line when a line is not a JSON object with an integer step.
  /// Returns the evaluation records of `step` it kept (a finished run's final test, which its
  /// train state, saved before that evaluation, does not hold).
  std::vector<EvalRecord> resume_metrics(int64_t step, bool keep_evals_at_step = true);
  /// Writes summary.json atomically.
  void write_summary(const RunSummary& summary) const;
  /// Writes diverged.json atomically: the step and the error message.
  void write_diverged(int64_t step, const std::string& error) const;
  /// Writes predictions/<split>.jsonl atomically: one JSON object per line (Task::predictions).
  void write_predictions(const std::string& split, const std::vector<nlohmann::json>& records) const;
  /// Writes config.yaml atomically.
  void write_config(const std::string& yaml) const;

 private:
  void append_line(const nlohmann::json& record);
  std::string path_;
  std::string metrics_;  // everything appended so far
};

}  // namespace tn
