#include "experiments/runner/train_step.h"

#include <chrono>
#include <cmath>

namespace tn {

TrainStep::TrainStep(TransNormerModel& model, const TrainSpec& train)
    : model_(model),
      params_(model.params().parameters()),
      optimizer_(params_, {train.optimizer.beta1, train.optimizer.beta2, train.optimizer.eps,
                           train.optimizer.weight_decay}),
      schedule_(make_schedule(train.schedule, train.optimizer.lr, train.max_steps)),
      clip_norm_(train.clip_norm),
      update_freq_(train.update_freq),
      dropout_rng_(dropout_seed(train.seed)) {}

StepResult TrainStep::run(const Objective& objective, const std::vector<std::unique_ptr<Batch>>& batches,
                          int64_t step, Tape& tape, ScoreProbe* probe) {
  const auto start = std::chrono::steady_clock::now();
  StepResult r;
  auto finish = [&](const char* non_finite) {
    r.non_finite = non_finite;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  };
  for (const auto& b : batches) {
    r.targets += b->targets();
    r.positions += b->positions();
  }
  model_.params().zero_grad();
  for (const auto& b : batches) {
    ForwardContext ctx{tape, true, dropout_rng_, nullptr, probe};
    BatchLoss loss = objective.loss(ctx, model_, *b);
    if (!std::isfinite(loss.sum)) {
      tape.clear();
      return finish("the training loss");
    }
    r.loss_sum += loss.sum;
    tape.backward(loss.loss, static_cast<float>(loss.count) / static_cast<float>(r.targets));
  }
  r.grad_norm = clip_grad_norm(params_, clip_norm_);
  // A non-finite gradient would poison every weight through AdamW: stop before the update.
  if (!std::isfinite(r.grad_norm)) return finish("the gradient norm");
  r.lr = schedule_.lr(step - 1);
  optimizer_.step(r.lr);
  return finish(nullptr);
}

}  // namespace tn
