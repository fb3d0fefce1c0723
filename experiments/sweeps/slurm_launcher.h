#pragma once
// The Slurm launcher: a sweep's pending points go to Slurm as one job array (`sbatch --array`),
// task i running the i-th point's train command; the launcher then follows the tasks with squeue
// and scontrol (slurm_status.h) until each ends. A data-parallel point asks for --ntasks ranks and
// starts them with `srun --mpi=pmix` (Open MPI's PMIx; `--mpi=pmi2` fails in MPI_Init). Stopping
// withdraws the queued tasks (scancel --state=PENDING) and sends SIGTERM to the running ones
// (scancel --signal=TERM --full), which save a checkpoint and exit, as local points do.
#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "experiments/sweeps/point_launcher.h"

namespace tn {

struct SlurmOptions {
  std::string job_name;                   // the array's --job-name: the sweep's name
  std::filesystem::path folder;           // <sweep folder>/slurm: batch scripts and Slurm's own output
  std::filesystem::path workdir;          // --chdir of the tasks (the sweep's working directory)
  std::vector<std::string> sbatch_args;   // the user's sbatch options (--slurm), before the script
  int threads = 1;                        // --cpus-per-task, and each point's --threads
  int ranks = 1;                          // --ntasks of each task (data-parallel ranks)
  int max_running = 0;                    // the array's %N throttle (tasks at a time); 0: no limit
  double poll_s = 2;                      // seconds between two looks at the queue
};

/// Splits `text` (--slurm "...") into words as a shell would, without running anything. Throws
/// ConfigError naming the option for unbalanced quotes or shell syntax (`$(...)`, `|`, `;`).
std::vector<std::string> split_sbatch_options(const std::string& text);

/// The batch script of a job array whose task i runs points[i]: #SBATCH lines, then a `case` on
/// SLURM_ARRAY_TASK_ID that appends a header to the point's log and execs its command there.
/// Submittable by hand (`sbatch script`), which is what `sweep --dry-run --launcher slurm` prints.
std::string slurm_batch_script(const SlurmOptions& options, const std::vector<PointLaunch>& points);

class SlurmLauncher : public PointLauncher {
 public:
  explicit SlurmLauncher(SlurmOptions options);
  const char* name() const override { return "slurm"; }
  std::vector<std::string> command(const std::vector<std::string>& train_argv) const override;
  /// Every pending point goes in one array: unlimited until one is submitted, then none.
  size_t free_slots() const override { return submitted_ ? 0 : SIZE_MAX; }
  /// Writes the batch script into options.folder and submits it. Throws ConfigError with sbatch's
  /// message when sbatch is missing or refuses the array.
  std::vector<PointEvent> launch(const std::vector<PointLaunch>& points) override;
  bool adopt(size_t point, const std::optional<std::string>& slurm_job, std::optional<int> slurm_task) override;
  std::vector<PointEvent> poll() override;
  size_t active() const override { return tasks_.size(); }
  void stop() override;
  const SlurmOptions& options() const { return options_; }

 private:
  struct Task {
    size_t point;
    std::string job;
    int task;
    bool started;
  };
  /// Looks at one array job's tasks and appends their events; when Slurm cannot be asked, warns
  /// and leaves the tasks for the next look.
  void look_at(const std::string& job, std::vector<PointEvent>& events);
  /// The array jobs of the tasks still followed.
  std::set<std::string> active_jobs() const;

  SlurmOptions options_;
  bool submitted_ = false;
  std::vector<Task> tasks_;
  std::chrono::steady_clock::time_point next_look_{};
};

}  // namespace tn
