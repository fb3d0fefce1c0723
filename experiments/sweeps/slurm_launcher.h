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
#include "experiments/sweeps/slurm_script.h"

namespace tn {

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
    int unreadable = 0;  // looks in a row at which scontrol's answer had no JobState
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
