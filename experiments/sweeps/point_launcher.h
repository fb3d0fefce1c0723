#pragma once
// What runs a sweep's points: the sweep runner (sweep_runner.cpp) decides which points run and
// keeps sweep.json; a launcher starts their `transnormer train` commands and reports when each
// is queued, starts and ends. Two launchers: local child processes (local_launcher.h) and a Slurm
// job array (slurm_launcher.h). A point may be data-parallel: its ranks are started by the
// cluster's own MPI launcher (`mpirun -np N` locally, `srun --mpi=pmix` under Slurm).
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace tn {

/// One point to start.
struct PointLaunch {
  size_t point = 0;                // the point's index in the sweep
  std::vector<std::string> argv;   // its `transnormer train ...` command
  std::filesystem::path log;       // <point dir>/train.log, appended to
};

/// Something that happened to a launched point.
struct PointEvent {
  enum class Kind { Queued, Started, Ended };
  Kind kind = Kind::Started;
  size_t point = 0;
  std::optional<int> pid;                 // a local point's process
  std::optional<std::string> slurm_job;   // a Slurm point's array job
  std::optional<int> slurm_task;          // and its task in the array
  // Ended only:
  std::optional<int> exit_code;  // the command's exit code, 128 + signal when a signal ended it;
                                 // absent when the scheduler no longer knows (the run folder tells)
  bool killed = false;    // ended from outside: a signal, or Slurm cancelled, timed out, preempted it
  std::string how;        // for a killed point: "killed by Killed", "Slurm: TIMEOUT"
  std::optional<double> wall_s;  // its run time, when the launcher knows it
};

class PointLauncher {
 public:
  virtual ~PointLauncher() = default;
  /// "local" or "slurm", as sweep.json records it.
  virtual const char* name() const = 0;
  /// The full command a point's train command runs under (an MPI launcher in front of it).
  virtual std::vector<std::string> command(const std::vector<std::string>& train_argv) const = 0;
  /// How many more points it takes now (the local launcher: --jobs minus the running ones).
  virtual size_t free_slots() const = 0;
  /// Starts `points` (each with command() already applied to its argv); returns their Queued or
  /// Started events, and later ones come from poll().
  /// Throws IoError or ConfigError when they cannot be started (sbatch refused them).
  virtual std::vector<PointEvent> launch(const std::vector<PointLaunch>& points) = 0;
  /// Takes over a point an earlier sweep run left queued or running on this launcher (its end, even
  /// one that came while no sweep was watching, then comes from poll()); false when this launcher
  /// cannot follow it (the local one follows no earlier run's processes; a record without task ids).
  virtual bool adopt(size_t point, const std::optional<std::string>& slurm_job, std::optional<int> slurm_task) = 0;
  /// The events since the last call; waits a little (up to about a second) when there are none.
  virtual std::vector<PointEvent> poll() = 0;
  /// Points launched or adopted and not yet ended.
  virtual size_t active() const = 0;
  /// Asks every active point to stop: a running one saves its checkpoint and exits (SIGTERM), a
  /// queued one is withdrawn. Their Ended events follow from poll().
  virtual void stop() = 0;
};

}  // namespace tn
