#pragma once
// Runs a sweep: each point as a `transnormer train` command (the same code path a user runs),
// started by a launcher (point_launcher.h): local child processes, up to `jobs` at a time, or one
// Slurm job array. Each point logs to <point dir>/train.log, and sweep.json is rewritten atomically
// at every change. A rerun skips the points that are done, follows the Slurm tasks an earlier run
// left queued or running, resumes the interrupted points from their checkpoint (`train --resume`,
// bit-exact at the same thread count) and, with retry_failed, runs failed and diverged points again
// from scratch. SIGTERM/SIGINT (polling of stop_requested) asks the launcher to stop every point,
// which saves and exits; those points stay pending and sweep.json stays consistent.
#include <functional>
#include <string>
#include <vector>

#include "experiments/sweeps/sweep_index.h"
#include "experiments/sweeps/sweep_spec.h"

namespace tn {

struct SweepOptions {
  std::string out_dir;        // the sweep folder: sweep.json and one run directory per point
  std::string data_root;      // passed to every child (--data-root)
  std::string binary;         // the transnormer executable to run the points with
  int jobs = 1;               // points at a time, >= 1
  int threads_per_job = 1;    // --threads of each child, >= 1
  bool retry_failed = false;  // run failed points again (resumed when they have a checkpoint) and diverged ones afresh
  std::string launcher = "local";        // "local" or "slurm"
  int ranks_per_point = 1;               // data-parallel ranks of each point (mpirun / srun --mpi=pmix)
  std::vector<std::string> slurm_args;   // sbatch options (--slurm)
  int slurm_max_running = 0;             // the job array's throttle (%N); 0: none
  bool detach = false;                   // slurm: submit and return; a rerun follows the tasks
  double poll_s = 2;                     // slurm: seconds between two looks at the queue
  std::function<int()> stop_requested;  // polled; a signal number stops the sweep
};

/// What a sweep run ended with.
struct SweepOutcome {
  int done = 0, failed = 0, diverged = 0, pending = 0;
  int stop_signal = 0;  // nonzero when stop_requested stopped it
  bool detached = false;  // the points were submitted and left to Slurm (SweepOptions::detach)
  /// 0 when every point is done (detached: none failed), 128 + signal when stopped, else 1.
  int exit_code() const;
};

/// Checks `sweep` against an existing sweep.json in options.out_dir (a point whose spec changed
/// is refused: ConfigError naming the point, the key and both values; added points are
/// accepted) and returns the index to run with: known points keep their state, new ones are
/// pending. Throws DataError for a corrupt sweep.json.
SweepIndex reconcile_index(const SweepSpec& sweep, const std::string& out_dir);

/// Runs the points of `sweep` that need running. Writes sweep.json; logs progress (done,
/// running, left, ETA from the finished points) to stderr.
SweepOutcome run_sweep(const SweepSpec& sweep, const SweepOptions& options);

/// The dry run: one line per point with its state, folder and overrides, then how many points a
/// run would start (failed and diverged ones only with `retry_failed`), as text for stdout.
std::string describe_sweep(const SweepSpec& sweep, const std::string& out_dir, bool retry_failed = false);

/// The Slurm dry run: the batch script that `run_sweep` would submit for the points that need
/// running now (empty when none does). Writes nothing.
std::string slurm_dry_run(const SweepSpec& sweep, const SweepOptions& options);

}  // namespace tn
