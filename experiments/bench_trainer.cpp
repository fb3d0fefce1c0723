#include "experiments/bench_trainer.h"

#include <algorithm>
#include <chrono>

#include "core/error.h"

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

/// Random tokens in [4, vocab − 1) (no special, no <mask>), each sample masked as masked_lm masks.
std::unique_ptr<Batch> random_mlm_batch(int64_t vocab, int64_t rows, int64_t seq_len, uint64_t seed) {
  if (vocab < 6) throw ConfigError("model.vocab_size: the mlm head's bench needs at least 6 ids (4 specials, <mask>)");
  PackedSamples samples;
  Rng data_rng(seed + 1);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t t = 0; t < seq_len; ++t)
      samples.tokens.push_back(4 + static_cast<int32_t>(data_rng.next_u64() % static_cast<uint64_t>(vocab - 5)));
    samples.offsets.push_back(static_cast<int64_t>(samples.tokens.size()));
  }
  MlmMasking masking;
  masking.mask_id = static_cast<int32_t>(vocab - 1);
  std::vector<int64_t> ids(rows);
  for (int64_t r = 0; r < rows; ++r) ids[r] = r;
  auto b = std::make_unique<MlmTaskBatch>();
  make_mlm_batch(samples, ids, masking, seed, 0, 1, b->data);
  b->positions_ = rows * seq_len;
  return b;
}

/// Random tokens in [0, vocab) at every position (no padding) and random classes, for the
/// classification head (the reference's train-bench) or, two documents per row, the retrieval head.
std::unique_ptr<Batch> random_sequence_batch(const ModelConfig& c, int64_t rows, int64_t seq_len, uint64_t seed) {
  auto b = std::make_unique<SequenceBatch>();
  b->rows = rows;
  b->seq_len = seq_len;
  b->dual = c.head == HeadKind::Retrieval;
  const int64_t positions = rows * seq_len * (b->dual ? 2 : 1);
  Rng data_rng(seed + 1);
  b->inputs.resize(positions);
  for (int32_t& id : b->inputs) id = static_cast<int32_t>(data_rng.next_u64() % static_cast<uint64_t>(c.vocab_size));
  b->key_valid.assign(positions, 1);
  b->labels.resize(rows);
  for (int32_t& l : b->labels) l = static_cast<int32_t>(data_rng.next_u64() % static_cast<uint64_t>(c.num_classes));
  b->scores.assign(rows, 0.0f);
  b->tokens = positions;
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
    : model_(config, seed), step_(model_, train), tokens_per_step_(batch * seq_len) {
  if (config.head == HeadKind::MLM) {
    objective_ = std::make_unique<MaskedLmObjective>();
    batches_ = one(random_mlm_batch(config.vocab_size, batch, seq_len, seed));
  } else if (config.head == HeadKind::Classification || config.head == HeadKind::Retrieval) {
    objective_ = std::make_unique<SequenceClassificationObjective>();
    batches_ = one(random_sequence_batch(config, batch, seq_len, seed));
    tokens_per_step_ *= config.head == HeadKind::Retrieval ? 2 : 1;
  } else {
    objective_ = std::make_unique<NextTokenObjective>();
    batches_ = one(random_batch(config.vocab_size, batch, seq_len, seed));
  }
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
