#pragma once
// The local launcher: each point a child process of the sweep, up to `jobs` at a time, with its
// stdout and stderr appended to the point's train.log, in a process group of its own (a Ctrl-C in
// the terminal reaches the sweep only, which forwards one SIGTERM). A data-parallel point
// (ranks > 1) runs under Open MPI's `mpirun -np ranks --bind-to none` (each rank takes the
// point's --threads; binding one rank to one core would pin its threads there).
#include <chrono>
#include <map>
#include <sys/types.h>

#include "experiments/sweeps/point_launcher.h"

namespace tn {

class LocalLauncher : public PointLauncher {
 public:
  /// jobs >= 1 points at a time; ranks >= 1 processes per point.
  LocalLauncher(int jobs, int ranks);
  const char* name() const override { return "local"; }
  std::vector<std::string> command(const std::vector<std::string>& train_argv) const override;
  size_t free_slots() const override;
  std::vector<PointEvent> launch(const std::vector<PointLaunch>& points) override;
  /// A local point outlives no sweep run: always false (the point runs again, resuming).
  bool adopt(size_t, const std::optional<std::string>&, std::optional<int>) override { return false; }
  std::vector<PointEvent> poll() override;
  size_t active() const override { return running_.size(); }
  void stop() override;

 private:
  struct Child {
    size_t point;
    std::chrono::steady_clock::time_point start;
  };
  int jobs_, ranks_;
  std::map<pid_t, Child> running_;
};

}  // namespace tn
