#pragma once
// The training log: steps are accumulated into a window, and every train.log_every steps (and at
// the last) the window becomes one metrics.jsonl TrainRecord and one progress line on stderr with
// throughput and ETA.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/platform/progress.h"

#include "experiments/outputs/metrics.h"
#include "experiments/runner/train_step.h"

namespace tn {



class TrainLog {
 public:
  TrainLog(int64_t log_every, int64_t max_steps) : log_every_(log_every), max_steps_(max_steps) {}
  /// Adds one step that took `seconds` (batch drawing included).
  void add(const StepResult& step, double seconds);
  /// Whether `step` ends a window (a multiple of log_every, or the last step).
  bool due(int64_t step) const { return (log_every_ > 0 && step % log_every_ == 0) || step == max_steps_; }
  /// Closes the window at `step`: the record of its mean loss and throughput, logged with the ETA
  /// from `train_s` (training seconds so far). Resets the window.
  TrainRecord flush(int64_t step, double epochs, const StepResult& last, double train_s);
  /// The open window, for a run stopped between two records ({"loss_sum", "tokens", "seconds"}),
  /// so the record after `--resume` averages the same steps as an uninterrupted run.
  nlohmann::json window_json() const;
  /// Reopens a window from window_json() (null: an empty window). Throws std::exception when malformed.
  void restore_window(const nlohmann::json& window);

 private:
  int64_t log_every_, max_steps_;
  double loss_ = 0, seconds_ = 0;
  int64_t tokens_ = 0;   // input tokens (throughput)
  int64_t targets_ = 0;  // loss terms (the mean loss)
};

}  // namespace tn
