#pragma once
// sweep.json, the index of a sweep folder: every point with its overrides, run directory, state,
// exit code, wall time and last error line, plus the resolved spec that identifies it on a rerun.
// Rewritten atomically at every change of state, so a sweep stopped at any moment leaves an index
// that a rerun continues from, and `report` reads. Layout (docs/architecture.md "Sweeps"):
//   {"name", "sweep_file", "base", "set": {key: value}, "axes": [key...],
//    "points": [{"name", "dir", "overrides": {key: value}, "command", "state", "exit_code",
//                "wall_s", "pid" (while running), "jobs", "threads", "ranks", "launcher",
//                "slurm_job", "slurm_task" (a Slurm sweep's array job and task), "error", "spec"}]}
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tn {

/// Queued: submitted to a scheduler (Slurm), waiting there for resources.
enum class PointState { Pending, Queued, Running, Done, Failed, Diverged };

/// "pending", "queued", "running", "done", "failed", "diverged".
const char* to_string(PointState state);

struct PointRecord {
  std::string name;                 // "normalize=scaling seed=1"
  std::string dir;                  // relative to the sweep folder
  nlohmann::ordered_json overrides;  // the point's own overrides, key -> value (train.seed included)
  std::string command;              // the `transnormer train ...` command of its last launch
  PointState state = PointState::Pending;
  std::optional<int> exit_code;     // of its last launch
  std::optional<double> wall_s;     // seconds of its launches: a resumed point's sessions added up
  std::optional<int> pid;           // the child's process id while it runs
  /// The sweep's --jobs and --threads-per-job at the point's last launch: with jobs > 1 its speed
  /// was measured beside other points (report marks it). Absent in indexes of older sweeps.
  std::optional<int> jobs, threads;
  std::optional<int> ranks;         // data-parallel ranks of each launch (--ranks-per-point), when > 1
  std::string launcher;             // "local" or "slurm": what ran its last launch ("" before any)
  std::optional<std::string> slurm_job;  // the Slurm array job of its last launch ("1234")
  std::optional<int> slurm_task;         // its task in that array (SLURM_ARRAY_TASK_ID)
  std::string error;                // the last error line of its log, when it failed
  nlohmann::ordered_json spec;      // resolved spec (spec_to_json, train.threads left out)
};

struct SweepIndex {
  std::string name, sweep_file, base;
  nlohmann::ordered_json set = nlohmann::ordered_json::object();
  std::vector<std::string> axes;
  std::vector<std::string> command_set, command_grid;  // the sweep's --set and --grid, as given
  bool smoke = false;  // the sweep's --smoke: its points are smoke tests, not results
  /// Where the last sweep on this folder ran (its working directory) and the --out it was given
  /// there: the sweep file and folder paths of a rerun command start from `cwd` ("" when not
  /// recorded).
  std::string cwd, out;
  std::vector<PointRecord> points;

  /// The point with folder `dir`, or nullptr.
  PointRecord* find(const std::string& dir);
  const PointRecord* find(const std::string& dir) const;
  /// " --set 'a=1' --grid 'b=2,3'": command_set and command_grid as shell words, then " --smoke"
  /// for a smoke test ("" when none).
  std::string command_line_words() const;
  nlohmann::ordered_json to_json() const;
  /// Needs "name", "axes" and "points", each point "name", "dir", "overrides" and "state"; the rest
  /// may be left out. Throws std::invalid_argument naming the first missing or malformed key.
  static SweepIndex from_json(const nlohmann::ordered_json& object);
};

/// Writes `index` to `path` atomically. Throws IoError when the write fails.
void write_sweep_index(const std::string& path, const SweepIndex& index);

/// Reads `path`. Throws DataError naming the file when it is unreadable or malformed.
SweepIndex read_sweep_index(const std::string& path);

}  // namespace tn
