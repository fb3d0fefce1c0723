#include "experiments/runner/train_step.h"

#include <chrono>
#include <cmath>

#include "core/rng.h"

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
  int64_t totals[2] = {0, 0};  // targets, positions: of this rank, then of all ranks
  for (const auto& b : batches) {
    totals[0] += b->targets();
    totals[1] += b->positions();
  }
  comm_.sum(totals, 2);
  r.targets = totals[0];
  r.positions = totals[1];
  model_.params().zero_grad();
  double loss_state[2] = {0, 0};  // loss sum, non-finite: of this rank, then of all ranks
  for (const auto& b : batches) {
    if (b->targets() == 0 && b->positions() == 0) continue;
    ForwardContext ctx{tape, true, dropout_rng_, nullptr, probe};
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
