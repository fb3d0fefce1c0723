#include "experiments/runner/train_step.h"

#include <chrono>
#include <cmath>

#include "core/runtime/rng.h"

namespace tn {

namespace {
/// Rank `rank`'s dropout state for the shared state `state`: rank 0 keeps it (one process runs as
/// before), the others get a state mixed with their rank.
uint64_t rank_dropout_state(uint64_t state, int rank) {
  return rank == 0 ? state : splitmix64_mix(state ^ (0xD1B54A32D192ED03ULL * static_cast<uint64_t>(rank)));
}
}  // namespace

TrainStep::TrainStep(TransNormerModel& model, const TrainSpec& train, Communicator& comm)
    : model_(model),
      params_(model.params().parameters()),
      optimizer_(params_, {train.optimizer.beta1, train.optimizer.beta2, train.optimizer.eps,
                           train.optimizer.weight_decay}),
      schedule_(make_schedule(train.schedule, train.optimizer.lr, train.max_steps)),
      clip_norm_(train.clip_norm),
      update_freq_(train.update_freq),
      comm_(comm),
      grad_sum_(comm.size() > 1 ? std::make_unique<GradAllreduce>(params_, comm) : nullptr),
      dropout_rng_(rank_dropout_state(dropout_seed(train.seed), comm.rank())) {}

void TrainStep::set_dropout_state(uint64_t state) { dropout_rng_.set_state(rank_dropout_state(state, comm_.rank())); }

StepResult TrainStep::run(const Objective& objective, const std::vector<std::unique_ptr<Batch>>& batches,
                          int64_t step, Tape& tape, ScoreProbe* probe) {
  const auto start = std::chrono::steady_clock::now();
  StepResult r;
  auto finish = [&](const char* non_finite) {
    r.non_finite = non_finite;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  };
  // Targets, positions, then per batch the ranks whose part is empty: of this rank, then summed.
  std::vector<int64_t>& counts = counts_;
  counts.assign(2 + batches.size(), 0);
  for (size_t i = 0; i < batches.size(); ++i) {
    counts[0] += batches[i]->targets();
    counts[1] += batches[i]->positions();
    counts[2 + i] = batches[i]->targets() == 0 && batches[i]->positions() == 0 ? 1 : 0;
  }
  comm_.sum(counts.data(), static_cast<int64_t>(counts.size()));
  r.targets = counts[0];
  r.positions = counts[1];
  model_.params().zero_grad();
  double loss_state[2] = {0, 0};  // loss sum, non-finite: of this rank, then of all ranks
  for (size_t i = 0; i < batches.size(); ++i) {
    const Batch* b = batches[i].get();
    if (b->targets() == 0 && b->positions() == 0) continue;
    ForwardContext ctx{tape, true, dropout_rng_, nullptr, probe};
    // BatchNorm combines its statistics across ranks unless some rank has no part of this batch
    // (a batch with fewer examples than ranks): that rank makes no forward, so the others keep to
    // their own rows rather than wait for it.
    if (comm_.size() > 1 && counts[2 + i] == 0) ctx.batch_stats_ranks = &comm_;
    BatchLoss loss = objective.loss(ctx, model_, *b);
    if (!std::isfinite(loss.sum)) {
      tape.clear();
      loss_state[1] = 1;
      break;
    }
    loss_state[0] += loss.sum;
    tape.backward(loss.loss, static_cast<float>(loss.count) / static_cast<float>(r.targets));
  }
  comm_.sum(loss_state, 2);  // every rank stops, or none
  if (loss_state[1] > 0) return finish("the training loss");
  r.loss_sum = loss_state[0];
  if (grad_sum_) r.comm_seconds = grad_sum_->run();
  r.grad_norm = clip_grad_norm(params_, clip_norm_);
  // A non-finite gradient would poison every weight through AdamW: stop before the update.
  if (!std::isfinite(r.grad_norm)) return finish("the gradient norm");
  r.lr = schedule_.lr(step - 1);
  optimizer_.step(r.lr);
  return finish(nullptr);
}

}  // namespace tn
