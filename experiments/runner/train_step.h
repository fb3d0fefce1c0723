#pragma once
// The training step of every task and of `bench`: one optimizer update over update_freq batches.
// Each batch's mean loss is back-propagated with weight (its targets / the step's targets), so
// the update follows the mean loss over every target of the step; then the global gradient norm
// is clipped (train.clip_norm) and AdamW applies the schedule's rate for this update.
//
// Data parallelism (core/platform/comm): each rank holds its part of every batch (the task's stream is
// sharded), the targets are counted over all ranks, each rank weighs its batches by that global
// count, and the gradients are summed across ranks before clipping, so every rank applies the same
// update as one process with the whole batch (up to the order of float sums). Dropout draws from a
// stream per rank.
#include <cstdint>
#include <memory>
#include <vector>

#include "core/runtime/autograd/tape.h"
#include "core/platform/comm/grad_allreduce.h"
#include "core/runtime/optim/adamw.h"
#include "core/runtime/optim/lr_schedule.h"
#include "core/runtime/rng.h"
#include "experiments/spec/spec.h"
#include "experiments/tasks/task.h"

namespace tn {

/// What one step did. `non_finite` names what stopped being finite ("the training loss", "the
/// gradient norm"); then no update was applied and the run must stop.
struct StepResult {
  double loss_sum = 0;      // Σ per-target loss over the step's batches (nats)
  int64_t targets = 0;      // targets over the step's batches
  int64_t positions = 0;    // input tokens over the step's batches (Batch::positions)
  double grad_norm = 0;     // before clipping
  double lr = 0;            // the rate of this update
  double seconds = 0;       // wall time of the step
  double comm_seconds = 0;  // of which in the gradient sums across ranks (0 for one process)
  const char* non_finite = nullptr;
};

class TrainStep {
 public:
  /// AdamW over every parameter of `model` with train.optimizer, the schedule of train.schedule
  /// (its total_steps defaulting to train.max_steps), train.clip_norm and train.update_freq, and
  /// the dropout generator seeded from train.seed. `model` and `comm` must outlive the step.
  TrainStep(TransNormerModel& model, const TrainSpec& train, Communicator& comm);

  /// Update number `step` (1-based: the schedule's lr(step - 1)) on `batches` (update_freq of
  /// them, already filled), recording on `tape` (its bf16 flag picks the precision). Batches
  /// with neither targets nor positions (a rank's empty part of a short batch) are skipped. The
  /// result's totals are over all ranks. Throws what the objective throws.
  /// `probe` (train.analysis.grad_stats) receives the attention layers' score taps of every batch.
  StepResult run(const Objective& objective, const std::vector<std::unique_ptr<Batch>>& batches,
                 int64_t step, Tape& tape, ScoreProbe* probe = nullptr);

  int64_t update_freq() const { return update_freq_; }
  AdamW& optimizer() { return optimizer_; }
  /// This rank's dropout generator; save rank 0's state, restore with set_dropout_state.
  Rng& dropout_rng() { return dropout_rng_; }
  /// Continues the dropout streams from rank 0's saved `state` (each rank derives its own).
  void set_dropout_state(uint64_t state);

  /// The dropout generator's seed for a run seed (fixed, so resumed runs continue exactly).
  static uint64_t dropout_seed(uint64_t seed) { return seed * 0x9E3779B97F4A7C15ULL + 0x5EEDULL; }

 private:
  TransNormerModel& model_;
  std::vector<std::pair<std::string, Var>> params_;
  AdamW optimizer_;
  LrSchedule schedule_;
  double clip_norm_;
  int64_t update_freq_;
  Communicator& comm_;
  std::vector<int64_t> counts_;  // the step's counts summed across ranks (kept: no allocation per step)
  std::unique_ptr<GradAllreduce> grad_sum_;  // with more than one rank
  Rng dropout_rng_;
};

}  // namespace tn
