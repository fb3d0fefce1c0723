#pragma once
// The unit of work `bench` times: one training step (forward in train mode with dropout, LM loss,
// backward, AdamW) of a model on fixed random tokens, like the reference's train-bench.
#include <cstdint>
#include <vector>

#include "core/autograd/tape.h"
#include "core/optim/adamw.h"
#include "core/rng.h"
#include "layers/models/transnormer.h"

namespace tn {

class BenchTrainer {
 public:
  /// Builds the model of `config` (vocab_size >= 1) with `seed`, and batch × seq_len random tokens
  /// and targets.
  BenchTrainer(const ModelConfig& config, int64_t batch, int64_t seq_len, uint64_t seed);

  /// One training step on `tape` (its bf16 flag picks the precision); returns its wall seconds.
  double train_step(Tape& tape);
  /// One forward in eval mode with the loss, on a disabled tape; returns its wall seconds.
  double infer(Tape& no_grad);

  TransNormerModel& model() { return model_; }
  int64_t tokens_per_step() const { return static_cast<int64_t>(tokens_.size()); }
  double last_loss() const { return last_loss_; }

 private:
  TransNormerModel model_;
  int64_t batch_, seq_len_;
  std::vector<int32_t> tokens_, targets_;
  AdamW optimizer_;
  Rng dropout_rng_;
  double last_loss_ = 0;
};

}  // namespace tn
