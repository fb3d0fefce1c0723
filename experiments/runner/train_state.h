#pragma once
// What `train --resume` needs besides the weights to continue a run exactly where its last
// checkpoint left it: the AdamW moments and step count, the training stream's place, the
// dropout generator, and the running totals. Stored in the run directory as train_state.safetensors: the moments as tensors
// "exp_avg.<param>" and "exp_avg_sq.<param>", the rest as JSON in __metadata__.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "core/runtime/optim/adamw.h"
#include "experiments/outputs/metrics.h"

namespace tn {

/// File names in the run directory: the state written with the current checkpoint, and the one
/// before it, kept until the new checkpoint is on disk.
inline constexpr const char* kTrainStateFile = "train_state.safetensors";
inline constexpr const char* kPreviousTrainStateFile = "train_state.previous.safetensors";

struct TrainState {
  int64_t step = 0;                   // completed training steps
  nlohmann::json stream;              // the training stream's place (BatchStream::state)
  uint64_t dropout_rng = 0;           // Rng::state() of the dropout generator
  double train_s = 0, eval_s = 0;     // seconds spent so far
  int64_t eval_tokens = 0;            // positions run through the model in evaluations so far
  int64_t tokens = 0;                 // training targets so far
  std::vector<EvalRecord> evals;      // evaluation records so far (summary.json)
  nlohmann::json log_window;          // the train log's open window (TrainLog::window_json), null when closed
  nlohmann::json analysis;            // the opt-in analyses' series so far (GradStats::state), null when off
  nlohmann::json best;                // the best validation so far (BestCheckpoint::state), null when off
  bool stopped_early = false;         // train.patience ended the run at `step`
};

/// Writes the optimizer's moments and `state` to `path` atomically. Throws IoError when the write fails.
void save_train_state(const std::string& path, const AdamW& optimizer, const TrainState& state);

/// Reads `path` into `optimizer` (moments and step count) and returns the rest. Throws DataError
/// naming the file when it is missing or corrupt, or when its moments do not match the
/// optimizer's parameters (names and shapes).
TrainState load_train_state(const std::string& path, AdamW& optimizer);

}  // namespace tn
