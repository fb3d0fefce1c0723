#pragma once
// Runs a sweep: each point as a child `transnormer train` process (the same code path a user
// runs), up to `jobs` at a time, each with its log in <point dir>/train.log, and sweep.json
// rewritten atomically at every change. A rerun skips the points that are done, resumes the
// interrupted ones from their checkpoint (`train --resume`, bit-exact at the same thread count)
// and, with retry_failed, runs failed and diverged points again from scratch. SIGTERM/SIGINT
// (RunOptions-style polling of stop_requested) forwards SIGTERM to the children, which save and
// exit; their points stay pending and sweep.json stays consistent.
#include <functional>
#include <string>

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
  std::function<int()> stop_requested;  // polled; a signal number stops the sweep
};

/// What a sweep run ended with.
struct SweepOutcome {
  int done = 0, failed = 0, diverged = 0, pending = 0;
  int stop_signal = 0;  // nonzero when stop_requested stopped it
  /// 0 when every point is done, 128 + signal when stopped, else 1.
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

/// The dry run: one line per point with its state, folder and overrides, as text for stdout.
std::string describe_sweep(const SweepSpec& sweep, const std::string& out_dir);

}  // namespace tn
