#pragma once
// train.checkpoint.best_metric and train.patience (experiments/spec/spec.h): which validation is the
// best so far (its weights go to checkpoint_best.safetensors) and when to stop early, as fine-tuning
// and LRA model selection use them. Its state travels in the train state, so --resume keeps the
// best so far and the count of validations without improvement.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "experiments/outputs/metrics.h"
#include "experiments/spec/spec.h"
#include "experiments/tasks/task.h"

namespace tn {

inline constexpr const char* kBestCheckpointFile = "checkpoint_best.safetensors";

/// Checks before training what the validations can give: train.checkpoint.best_metric must name
/// one of the task's metric_names() and the data must have a validation split (ConfigError naming
/// `spec_path`, the key, and the names it has or the data keys that give a split). Returns a
/// warning when train.eval_every asks for validations of data without a validation split, else "".
std::string check_validation_plan(const Task& task, const TrainSpec& train, const std::string& spec_path);

class BestCheckpoint {
 public:
  explicit BestCheckpoint(const TrainSpec& train);
  bool enabled() const { return !metric_.empty(); }
  /// After the validation of `step` (`valid` holds its metrics): whether it beats every earlier one
  /// (strictly; the first finite one always does, a non-finite one never). Counts the validations without improvement. Throws
  /// ConfigError naming train.checkpoint.best_metric when `valid` lacks the metric, with those it has.
  bool observe(const Metrics& valid, int64_t step);
  /// Whether train.patience validations in a row brought no improvement.
  bool patience_exhausted() const { return patience_ > 0 && bad_evals_ >= patience_; }
  /// "valid.accuracy 0.8142 at step 526 (max)" for the log.
  std::string describe() const;
  /// {"value", "step", "bad_evals"} for the train state, null when disabled; restore reads it back.
  nlohmann::json state() const;
  void restore(const nlohmann::json& state);
  /// summary.json's "best": {"metric", "mode", "value", "step"}, null when disabled or never observed.
  nlohmann::json summary() const;

 private:
  std::string metric_;  // "valid.accuracy"
  bool maximize_ = false;
  int64_t patience_ = 0;
  double value_ = 0;
  int64_t step_ = 0;  // 0: nothing observed yet
  int64_t bad_evals_ = 0;
};

}  // namespace tn
