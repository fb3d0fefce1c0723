#include "experiments/bench_trainer.h"

#include <algorithm>
#include <chrono>

namespace tn {

namespace {
std::unique_ptr<Batch> random_batch(int64_t vocab, int64_t rows, int64_t seq_len, uint64_t seed) {
  auto b = std::make_unique<LmTaskBatch>();
  LmBatch& d = b->data;
  d.rows = rows;
  d.seq_len = seq_len;
  d.inputs.resize(rows * seq_len);
  d.targets.resize(rows * seq_len);
  d.n_targets = rows * seq_len;
  Rng data_rng(seed + 1);
  // Drawn interleaved (token, target), so a seed gives the same batch as earlier versions.
  for (size_t i = 0; i < d.inputs.size(); ++i) {
    d.inputs[i] = static_cast<int32_t>(data_rng.next_u64() % vocab);
    d.targets[i] = static_cast<int32_t>(data_rng.next_u64() % vocab);
  }
  return b;
}

std::vector<std::unique_ptr<Batch>> one(std::unique_ptr<Batch> b) {
  std::vector<std::unique_ptr<Batch>> v;
  v.push_back(std::move(b));
  return v;
}
}  // namespace

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
    : model_(config, seed),
      step_(model_, train),
      batches_(one(random_batch(config.vocab_size, batch, seq_len, seed))),
      batch_(static_cast<LmTaskBatch&>(*batches_.front())) {}

double BenchTrainer::train_step(Tape& tape) {
  const StepResult r = step_.run(objective_, batches_, ++steps_, tape);
  last_loss_ = r.loss_sum / static_cast<double>(std::max<int64_t>(r.targets, 1));
  return r.seconds;
}

double BenchTrainer::infer(Tape& no_grad) {
  const auto start = std::chrono::steady_clock::now();
  ForwardContext ctx{no_grad, false, step_.dropout_rng(), nullptr};
  objective_.loss(ctx, model_, batch_);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace tn
