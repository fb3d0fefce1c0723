#include "experiments/tasks/masked_lm.h"
#include "experiments/tasks/task_factory.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "core/platform/cancel.h"
#include "core/platform/comm/communicator.h"
#include "core/platform/comm/share.h"
#include "core/platform/progress.h"
#include "core/error.h"
#include "data/batching/lm_blocks.h"
#include "data/data_root.h"
#include "data/metrics/unigram.h"

namespace tn {

BatchLoss MaskedLmObjective::loss(ForwardContext& ctx, TransNormerModel& model, const Batch& batch) const {
  const auto* mlm = dynamic_cast<const MlmTaskBatch*>(&batch);
  if (!mlm) throw ShapeError("[MaskedLmObjective] the batch is not a masked-LM batch");
  const MlmBatch& b = mlm->data;
  const std::vector<uint8_t>* outer = ctx.key_valid;
  ctx.key_valid = &b.key_valid;
  Var hidden = model.forward(ctx, b.inputs, b.rows, b.seq_len);
  LmLoss l = model.token_loss_at(ctx, hidden, b.masked_rows, b.masked_targets);
  ctx.key_valid = outer;
  return {l.loss, l.sum_nll, l.n_targets};
}

MaskedLmTask::MaskedLmTask(MlmData data, std::vector<std::string> vocabulary, MlmMasking masking, int32_t pad,
                           int64_t seq_len, int64_t batch_size, uint64_t seed)
    : data_(std::move(data)), vocabulary_(std::move(vocabulary)), masking_(masking), pad_(pad), seq_len_(seq_len),
      batch_size_(batch_size), seed_(seed) {}

void MaskedLmTask::configure_model(ModelConfig& model, bool vocab_size_given, const std::string& spec_path) const {
  const auto vocab = static_cast<int64_t>(vocabulary_.size());
  if (!vocab_size_given || model.vocab_size == 0) {
    model.vocab_size = vocab;
  } else if (model.vocab_size < vocab) {
    throw ConfigError(spec_path + ": model.vocab_size=" + std::to_string(model.vocab_size) +
                      " is smaller than the dictionary (" + std::to_string(vocab) +
                      " ids with <mask>); remove the key to fill it in from the dictionary");
  }
}

BatchStream MaskedLmTask::training_stream() const {
  return BatchStream(
      data_.train.count(),
      [n = data_.train.count(), batch_size = batch_size_, seed = seed_](uint64_t epoch) {
        return shuffled_batches(n, batch_size, seed, epoch);
      },
      "sample");
}

void MaskedLmTask::fill_batch(const std::vector<int64_t>& ids, uint64_t epoch, Batch& batch) const {
  auto* mlm = dynamic_cast<MlmTaskBatch*>(&batch);
  if (!mlm) throw ShapeError("[MaskedLmTask] the batch was not made by new_batch()");
  mlm->positions_ = 0;
  if (ids.empty()) {  // more ranks than samples in a batch: this rank's part is empty, the step skips it
    mlm->data = {};
    return;
  }
  make_mlm_batch(data_.train, ids, masking_, seed_, epoch, pad_, mlm->data);
  for (int64_t id : ids) mlm->positions_ += data_.train.length(id);
}

const PackedSamples& MaskedLmTask::split_samples(const std::string& split) const {
  if (split == kValid) return data_.valid;
  if (split == kTest) return data_.test;
  throw ConfigError("split \"" + split + "\": masked_lm has the splits valid and test");
}

bool MaskedLmTask::has_split(const std::string& split) const {
  return (split == kValid || split == kTest) && split_samples(split).count() > 0;
}

Metrics MaskedLmTask::evaluate(TransNormerModel& model, const std::string& split, int64_t batch_size,
                               int64_t max_examples) const {
  const PackedSamples& samples = split_samples(split);
  if (samples.count() == 0) throw ConfigError("the spec has no " + split + " split");
  Tape tape;
  tape.set_enabled(false);
  Rng rng(0);
  ForwardContext ctx{tape, false, rng, nullptr};
  MlmTaskBatch batch;
  std::vector<int64_t> ids;
  // Each rank a contiguous share of the samples (each sample's mask is a function of its id, so
  // the shares do not change it); the sums are added up across ranks.
  Communicator& ranks = this->ranks();
  const int64_t count = max_examples > 0 ? std::min<int64_t>(samples.count(), max_examples) : samples.count();
  const auto [begin, end] = share_of(count, ranks.rank(), ranks.size());
  double sums[2] = {0, 0};  // Σ loss, masked tokens
  Progress progress("evaluating", "samples", end - begin);
  for (int64_t first = begin; first < end; first += batch_size) {
    throw_if_cancelled();
    progress.advance(first - begin);
    ids.clear();
    for (int64_t i = first; i < std::min(end, first + batch_size); ++i) ids.push_back(i);
    make_mlm_batch(samples, ids, masking_, kEvalMaskSeed, kValidMaskEpoch, pad_, batch.data);
    const BatchLoss l = objective_.loss(ctx, model, batch);
    sums[0] += l.sum;
    sums[1] += static_cast<double>(l.count);
  }
  ranks.sum(sums, 2);
  const double sum = sums[0];
  const auto tokens = static_cast<int64_t>(sums[1]);
  Metrics m;
  m.set("loss", sum / static_cast<double>(tokens));
  m.set("ppl", std::exp(sum / static_cast<double>(tokens)));
  m.set_count("tokens", tokens);
  return m;
}

TaskReport MaskedLmTask::report() const {
  TaskReport r;
  r.data = {{"train", data_.train_file}, {"valid", data_.valid_file}, {"test", data_.test_file}};
  // The floor a masked LM must beat: the scored tokens' perplexity under the training samples'
  // add-one unigram distribution (specials and padding never scored).
  auto unigram = [&](const PackedSamples& s) -> std::optional<double> {
    if (s.count() == 0) return std::nullopt;
    MlmBatch b;
    std::vector<int64_t> ids(s.count());
    for (int64_t i = 0; i < s.count(); ++i) ids[i] = i;
    make_mlm_batch(s, ids, masking_, kEvalMaskSeed, kValidMaskEpoch, pad_, b);
    std::vector<int32_t> scored{0};  // unigram_ppl scores eval[1:]
    scored.insert(scored.end(), b.masked_targets.begin(), b.masked_targets.end());
    return unigram_ppl(data_.train.tokens, scored, static_cast<int64_t>(vocabulary_.size()));
  };
  r.baselines = {{"unigram_valid_ppl", unigram(data_.valid)}, {"unigram_test_ppl", unigram(data_.test)}};
  return r;
}

BatchLoss MaskedLmTask::loss(ForwardContext& ctx, TransNormerModel& model, const Batch& batch) const {
  return objective_.loss(ctx, model, batch);
}

std::unique_ptr<Task> make_masked_lm(const ExperimentSpec& spec, const std::string& data_root) {
  require_model(spec, "masked_lm", Arch::Encoder, HeadKind::MLM);
  const TextSource* text = &require_source<TextSource>(spec, "masked_lm", "running text", "a text reader such as wikitext");
  const TokenizerSpec tok = text->text_tokenizer();
  if (tok.kind != TokenizerSpec::Kind::Gpt2)
    throw ConfigError(spec.path + ": data.tokenizer: masked_lm needs the GPT-2 BPE; set data.tokenizer: gpt2 "
                      "and point data.train at a .raw file (wikitext-103-raw/wiki.train.raw)");
  const int64_t seq_len = spec.data->tokens_per_sample();
  if (seq_len < 3)
    throw ConfigError(spec.path + ": data.seq_len: " + std::to_string(seq_len) +
                      " leaves no room for a token between <s> and </s>; use 512 (RoBERTa) or 128");
  if (spec.model.positional == Positional::Learned && seq_len > spec.model.max_positions)
    throw ConfigError(spec.path + ": data.seq_len: " + std::to_string(seq_len) + " exceeds model.max_positions " +
                      std::to_string(spec.model.max_positions) + "; lower data.seq_len or raise max_positions");
  const Gpt2Codec codec = Gpt2Codec::load(data_path(data_root, tok.bpe_dir), data_path(data_root, tok.dict));
  MlmData data = encode_mlm_data(text->read_text(data_root), codec, seq_len);
  spdlog::info("data: train {} lines / {} tokens in {} samples, valid {} samples, test {} samples, dictionary {}",
               data.train_lines, data.train_tokens, data.train.count(), data.valid.count(), data.test.count(),
               codec.dict.size());
  if (spec.train.batch_size > data.train.count())
    throw ConfigError(spec.path + ": train.batch_size: " + std::to_string(spec.train.batch_size) + " exceeds the " +
                      std::to_string(data.train.count()) + " training samples (one epoch); use a batch of at most " +
                      std::to_string(data.train.count()));
  MlmMasking masking;
  masking.mask_id = codec.dict.mask();
  masking.n_special = 4;
  return std::make_unique<MaskedLmTask>(std::move(data), codec.dict.symbols(), masking, codec.dict.pad(), seq_len,
                                        spec.train.batch_size, spec.train.seed);
}

BenchWork masked_lm_bench_work(const ModelConfig& config, int64_t rows, int64_t seq_len, uint64_t seed) {
  if (config.head != HeadKind::MLM) return {};
  const int64_t vocab = config.vocab_size;
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
  return {std::make_unique<MaskedLmObjective>(), std::move(b)};
}

}  // namespace tn
