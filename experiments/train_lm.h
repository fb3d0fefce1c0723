#pragma once
// Training a decoder language model under the data protocol (shared/reference/README.md
// "Training (train)", "What one run does, exactly"): data, model init, epoch_order batches,
// AdamW with the spec's schedule, periodic evaluation, and the run directory of design.md.
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "experiments/spec.h"

namespace tn {

struct TrainOptions {
  std::string out_dir;    // run directory (created)
  std::string data_root;  // where relative data paths are taken from
  bool resume = false;    // continue the run in out_dir from its last checkpoint (--resume)
};

/// Raised when the loss stops being finite; the run directory keeps the last good checkpoint.
struct TrainingDiverged : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Runs the whole training job and returns summary.json's content (also written to the run
/// directory, with config.yaml, metrics.jsonl and checkpoint.safetensors). Progress goes to the
/// spdlog logger (stderr). Throws ConfigError/DataError for bad input, TrainingDiverged on a
/// non-finite loss.
nlohmann::json train_lm(const ExperimentSpec& spec, const TrainOptions& options);

}  // namespace tn
