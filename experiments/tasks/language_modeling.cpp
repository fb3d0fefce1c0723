#include "experiments/tasks/language_modeling.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "data/metrics/unigram.h"
#include "data/readers/wikitext.h"
#include "experiments/tasks/lm_evaluate.h"
#include "experiments/tasks/task_factory.h"

namespace tn {

BatchLoss NextTokenObjective::loss(ForwardContext& ctx, TransNormerModel& model, const Batch& batch) const {
  const auto* lm = dynamic_cast<const LmTaskBatch*>(&batch);
  if (!lm) throw ShapeError("[NextTokenObjective] the batch is not a language-model batch");
  const LmBatch& b = lm->data;
  Var hidden = model.forward(ctx, b.inputs, b.rows, b.seq_len);
  LmLoss loss = model.lm_loss(ctx, hidden, b.targets);
  return {loss.loss, loss.sum_nll, loss.n_targets};
}

namespace {

/// data_statistics() of `data`: the vocabulary size and, per split read, its file, lines, tokens
/// and share of <unk>.
nlohmann::ordered_json lm_statistics(const LmData& data) {
  nlohmann::ordered_json splits = nlohmann::ordered_json::object();
  const int32_t unk = data.vocab.id("<unk>");
  const auto add = [&](const char* name, int64_t lines, const std::string& file, const std::vector<int32_t>& ids) {
    if (file.empty()) return;
    const auto unknown = std::count(ids.begin(), ids.end(), unk);
    splits[name] = {{"file", file},
                    {"lines", lines},
                    {"tokens", ids.size()},
                    {"unknown_rate", ids.empty() ? 0.0 : static_cast<double>(unknown) / static_cast<double>(ids.size())}};
  };
  add("train", data.train_lines, data.train_file, data.train);
  add("valid", data.valid_lines, data.valid_file, data.valid);
  add("test", data.test_lines, data.test_file, data.test);
  return {{"vocab_size", data.vocab.size()}, {"splits", splits}};
}

}  // namespace

LanguageModelingTask::LanguageModelingTask(LmData data, int64_t seq_len, int64_t batch_size, uint64_t seed)
    : data_(std::move(data)), statistics_(lm_statistics(data_)), seq_len_(seq_len), batch_size_(batch_size),
      blocks_{std::move(data_.train), seq_len},  // the blocks own the training stream
      seed_(seed) {}

void LanguageModelingTask::configure_model(ModelConfig& model, bool vocab_size_given,
                                           const std::string& spec_path) const {
  const int64_t vocab = data_.vocab.size();
  if (!vocab_size_given || model.vocab_size == 0) {
    model.vocab_size = vocab;
  } else if (model.vocab_size < vocab) {
    throw ConfigError(spec_path + ": model.vocab_size=" + std::to_string(model.vocab_size) +
                      " is smaller than the training vocabulary (" + std::to_string(vocab) +
                      " words); remove the key to fill it in from the data");
  }
}

int64_t LanguageModelingTask::positions_per_batch() const { return batch_size_ * seq_len_; }

std::unique_ptr<Batch> LanguageModelingTask::new_batch() const { return std::make_unique<LmTaskBatch>(); }

BatchStream LanguageModelingTask::training_stream() const {
  return BatchStream(
      blocks_.count(),
      [n = blocks_.count(), batch_size = batch_size_, seed = seed_](uint64_t epoch) {
        return shuffled_batches(n, batch_size, seed, epoch);
      },
      "block");
}

void LanguageModelingTask::fill_batch(const std::vector<int64_t>& ids, uint64_t /*epoch*/, Batch& batch) const {
  auto* lm = dynamic_cast<LmTaskBatch*>(&batch);
  if (!lm) throw ShapeError("[LanguageModelingTask] the batch was not made by new_batch()");
  if (ids.empty()) {  // more ranks than blocks in a batch: this rank's part is empty, the step skips it
    lm->data.rows = lm->data.seq_len = lm->data.n_targets = 0;
    lm->data.inputs.clear();
    lm->data.targets.clear();
    return;
  }
  make_batch(blocks_, ids, lm->data);
}

const std::vector<int32_t>& LanguageModelingTask::split_stream(const std::string& split) const {
  if (split == kValid) return data_.valid;
  if (split == kTest) return data_.test;
  throw ConfigError("split \"" + split + "\": language modelling has the splits valid and test");
}

bool LanguageModelingTask::has_split(const std::string& split) const {
  return (split == kValid || split == kTest) && !split_stream(split).empty();
}

Metrics LanguageModelingTask::evaluate(TransNormerModel& model, const std::string& split, int64_t batch_size,
                                       int64_t max_examples) const {
  const std::vector<int32_t>& ids = split_stream(split);
  if (ids.empty()) throw ConfigError("the spec has no " + split + " split");
  // The first max_examples blocks of seq_len targets: seq_len * n + 1 tokens.
  const bool limited = max_examples > 0 && static_cast<uint64_t>(max_examples) < ids.size() / static_cast<uint64_t>(seq_len_);
  const LmEval r = limited ? evaluate_lm(model, std::vector<int32_t>(ids.begin(), ids.begin() + max_examples * seq_len_ + 1),
                                         seq_len_, batch_size, ranks())
                           : evaluate_lm(model, ids, seq_len_, batch_size, ranks());
  Metrics m;
  m.set("loss", r.loss);
  m.set("ppl", r.ppl);
  m.set_count("tokens", r.tokens);
  return m;
}

TaskReport LanguageModelingTask::report() const {
  TaskReport r;
  r.data = {{"train", data_.train_file}, {"valid", data_.valid_file}, {"test", data_.test_file}};
  const int64_t vocab = data_.vocab.size();
  auto unigram = [&](const std::vector<int32_t>& ids) -> std::optional<double> {
    if (ids.size() <= 1) return std::nullopt;
    return unigram_ppl(blocks_.stream, ids, vocab);
  };
  r.baselines = {{"unigram_valid_ppl", unigram(data_.valid)}, {"unigram_test_ppl", unigram(data_.test)}};
  return r;
}

BatchLoss LanguageModelingTask::loss(ForwardContext& ctx, TransNormerModel& model, const Batch& batch) const {
  return objective_.loss(ctx, model, batch);
}

std::unique_ptr<Task> make_language_modeling(const ExperimentSpec& spec, const std::string& data_root) {
  require_model(spec, "language_modeling", Arch::Decoder, HeadKind::LM);
  const TextSource* text = &require_source<TextSource>(spec, "language_modeling", "running text",
                                                       "a text reader such as wikitext");
  if (text->text_tokenizer().kind != TokenizerSpec::Kind::Word)
    throw ConfigError(spec.path + ": data.tokenizer: language_modeling reads words (tokenizer: word); "
                      "GPT-2 BPE text is for the masked_lm task");
  LmData data = encode_lm_data(text->read_text(data_root));
  spdlog::info("data: train {} lines / {} tokens, valid {} tokens, test {} tokens, vocabulary {}", data.train_lines,
               data.train.size(), data.valid.size(), data.test.size(), data.vocab.size());
  const int64_t seq_len = spec.data->tokens_per_sample();
  const LmBlocks blocks{data.train, seq_len};
  if (blocks.count() == 0) throw DataError(data.train_file + ": the training split has no targets");
  if (seq_len > blocks.total_targets())
    throw ConfigError(spec.path + ": data.seq_len: " + std::to_string(seq_len) + " exceeds the training split's " +
                      std::to_string(blocks.total_targets()) +
                      " targets; use a seq_len of at most that (the quickstart uses 256)");
  // A batch is at most one epoch: a larger one would only repeat the whole split in every step.
  if (spec.train.batch_size > blocks.count())
    throw ConfigError(spec.path + ": train.batch_size: " + std::to_string(spec.train.batch_size) + " exceeds the " +
                      std::to_string(blocks.count()) + " training blocks of data.seq_len " + std::to_string(seq_len) +
                      " (one epoch); use a batch of at most " + std::to_string(blocks.count()));
  return std::make_unique<LanguageModelingTask>(std::move(data), seq_len, spec.train.batch_size, spec.train.seed);
}

std::unique_ptr<Task> language_modeling_for_checkpoint(const LoadedCheckpoint& checkpoint,
                                                       const std::string& checkpoint_path, const std::string& data_file,
                                                       int64_t seq_len, int64_t batch_size) {
  if (checkpoint.model->config().head != HeadKind::LM) return nullptr;
  if (checkpoint.vocab.empty())
    throw DataError(checkpoint_path + ": the checkpoint holds no \"transnormer.vocab\"; it cannot map words to ids");
  LmData data{WordVocab::from_tokens(checkpoint.vocab)};
  data.test = data.vocab.encode(read_lines(data_file));
  if (data.test.empty()) throw DataError(data_file + ": holds no words; give a .tokens file with text");
  data.test_file = data_file;
  return std::make_unique<LanguageModelingTask>(std::move(data), seq_len, batch_size, 0);
}

BenchWork language_modeling_bench_work(const ModelConfig& config, int64_t rows, int64_t seq_len, uint64_t seed) {
  if (config.head != HeadKind::LM) return {};
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
    d.inputs[i] = static_cast<int32_t>(data_rng.next_u64() % config.vocab_size);
    d.targets[i] = static_cast<int32_t>(data_rng.next_u64() % config.vocab_size);
  }
  return {std::make_unique<NextTokenObjective>(), std::move(b)};
}

}  // namespace tn
