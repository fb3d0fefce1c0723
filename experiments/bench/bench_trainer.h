#pragma once
// The unit of work `bench` times: the runner's training step (experiments/runner/train_step.h:
// forward in train mode with dropout, the loss, backward, clipping, AdamW at the spec's schedule)
// of a model on one fixed batch of random tokens, like the reference's train-bench. The batch and
// the loss are those of the task whose head the model has (TaskEntry::bench_work): next-token
// cross-entropy for the lm head, the masked-LM loss on 15 % of the positions for the mlm head,
// cross-entropy of random classes for the classification and retrieval heads (retrieval reads two
// documents per row).
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/runtime/autograd/tape.h"
#include "experiments/runner/train_step.h"
#include "experiments/spec/spec.h"
#include "experiments/tasks/task.h"

namespace tn {

class BenchTrainer {
 public:
  /// Builds the model of `config` (vocab_size >= 1) with `seed`, its TrainStep from `train`
  /// (optimizer, schedule, clipping; one batch per update), and batch × seq_len random tokens and
  /// targets.
  BenchTrainer(const ModelConfig& config, const TrainSpec& train, int64_t batch, int64_t seq_len, uint64_t seed);

  /// One training step on `tape` (its bf16 flag picks the precision); returns its wall seconds.
  double train_step(Tape& tape);
  /// One forward in eval mode with the loss, on a disabled tape; returns its wall seconds.
  double infer(Tape& no_grad);

  TransNormerModel& model() { return model_; }
  int64_t tokens_per_step() const { return tokens_per_step_; }
  /// Mean loss of the last training step (nats).
  double last_loss() const { return last_loss_; }

 private:
  TransNormerModel model_;
  TrainStep step_;
  std::unique_ptr<Objective> objective_;          // the objective of the task of the model's head
  std::vector<std::unique_ptr<Batch>> batches_;  // the one fixed batch
  int64_t tokens_per_step_ = 0;
  int64_t steps_ = 0;
  double last_loss_ = 0;
};

/// The TrainSpec `bench` times with: the spec's own when it has one, else the defaults with a
/// constant rate (train.optimizer.lr); always one batch per update (bench times one batch), and
/// max_steps at least `steps` (the timed and warm-up steps).
TrainSpec bench_train_spec(const std::optional<TrainSpec>& spec_train, int64_t steps);

}  // namespace tn
