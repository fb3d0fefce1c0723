#include "experiments/bench/bench_trainer.h"

#include <algorithm>
#include <chrono>

#include "core/error.h"
#include "experiments/tasks/registry.h"

namespace tn {

TrainSpec bench_train_spec(const std::optional<TrainSpec>& spec_train, int64_t steps) {
  TrainSpec t;
  if (spec_train) {
    t = *spec_train;
  } else {  // a model-only file: AdamW's defaults at a constant peak rate, as the reference's train-bench
    t.schedule.kind = ScheduleKind::Constant;
    t.schedule.warmup_steps = 0;
  }
  t.update_freq = 1;
  t.max_steps = std::max<int64_t>(t.max_steps, steps);
  return t;
}

BenchTrainer::BenchTrainer(const ModelConfig& config, const TrainSpec& train, int64_t batch, int64_t seq_len,
                           uint64_t seed)
    : model_(config, seed), step_(model_, train, single_process()) {
  BenchWork work = make_bench_work(config, batch, seq_len, seed);
  objective_ = std::move(work.objective);
  tokens_per_step_ = work.batch->positions();
  batches_.push_back(std::move(work.batch));
}

double BenchTrainer::train_step(Tape& tape) {
  const StepResult r = step_.run(*objective_, batches_, ++steps_, tape);
  last_loss_ = r.loss_sum / static_cast<double>(std::max<int64_t>(r.targets, 1));
  return r.seconds;
}

double BenchTrainer::infer(Tape& no_grad) {
  const auto start = std::chrono::steady_clock::now();
  ForwardContext ctx{no_grad, false, step_.dropout_rng(), nullptr};
  objective_->loss(ctx, model_, *batches_.front());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace tn
