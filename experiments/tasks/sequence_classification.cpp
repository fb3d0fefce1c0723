#include "experiments/tasks/sequence_classification.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "core/platform/cancel.h"
#include "core/platform/comm/communicator.h"
#include "core/platform/progress.h"
#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "core/runtime/ops/cross_entropy.h"
#include "core/runtime/ops/mse_loss.h"
#include "data/metrics/classification_metrics.h"
#include "data/metrics/regression_metrics.h"

namespace tn {

void make_sequence_batch(const LabelledSequences& split, const std::vector<int64_t>& ids, bool regression, int32_t pad,
                         SequenceBatch& batch) {
  if (ids.empty()) throw ShapeError("[make_sequence_batch] no examples");
  int64_t longest = 0;
  for (int64_t id : ids) {
    if (id < 0 || id >= static_cast<int64_t>(split.size()))
      throw ShapeError("[make_sequence_batch] example " + std::to_string(id) + " outside " + split.name);
    longest = std::max(longest, split.lengths[id]);
  }
  batch.rows = static_cast<int64_t>(ids.size());
  batch.seq_len = longest;
  batch.dual = split.dual();
  batch.regression = regression;
  const int64_t sequences = batch.rows * (batch.dual ? 2 : 1);
  batch.inputs.assign(sequences * longest, pad);
  batch.key_valid.assign(sequences * longest, 0);
  batch.labels.resize(batch.rows);
  batch.scores.resize(batch.rows);
  batch.tokens = 0;
  const auto put = [&](const std::vector<int32_t>& in, int64_t row) {
    std::copy(in.begin(), in.end(), batch.inputs.begin() + row * longest);
    std::fill_n(batch.key_valid.begin() + row * longest, in.size(), uint8_t{1});
    batch.tokens += static_cast<int64_t>(in.size());
  };
  for (int64_t r = 0; r < batch.rows; ++r) {
    put(split.inputs[ids[r]], r);
    if (batch.dual) put(split.seconds[ids[r]], batch.rows + r);
    batch.labels[r] = split.labels[ids[r]];
    batch.scores[r] = static_cast<float>(split.targets[ids[r]]);
  }
}

Var sequence_logits(ForwardContext& ctx, TransNormerModel& model, const SequenceBatch& batch) {
  const std::vector<uint8_t>* outer = ctx.key_valid;
  ctx.key_valid = &batch.key_valid;
  Var hidden = model.forward(ctx, batch.inputs, batch.rows * (batch.dual ? 2 : 1), batch.seq_len);
  Var logits = batch.dual ? model.retrieve(ctx, hidden, &batch.key_valid) : model.classify(ctx, hidden);
  ctx.key_valid = outer;
  return logits;
}

BatchLoss SequenceClassificationObjective::loss(ForwardContext& ctx, TransNormerModel& model,
                                                const Batch& batch) const {
  const auto* b = dynamic_cast<const SequenceBatch*>(&batch);
  if (!b) throw ShapeError("[SequenceClassificationObjective] the batch is not a sequence batch");
  Var logits = sequence_logits(ctx, model, *b);
  const LmLoss l = b->regression ? mse_loss(ctx.tape, logits, b->scores) : cross_entropy(ctx.tape, logits, b->labels);
  return {l.loss, l.sum_nll, l.n_targets};
}

SequenceClassificationTask::SequenceClassificationTask(EncodedData data, std::shared_ptr<const DataSpec> data_spec,
                                                       const ClassificationOptions& options, int64_t batch_size,
                                                       uint64_t seed)
    : splits_(std::move(data.splits)), data_(std::move(data_spec)),
      dataset_(std::move(data.dataset)), vocabulary_(std::move(data.vocabulary)),
      pad_(data.pad), options_(options), limits_{.max_sentences = batch_size, .max_tokens = options.max_tokens},
      seed_(seed) {
  if (!dataset_.prediction_text || splits_.empty() || splits_.front().role != SentenceSplit::Role::Train)
    throw ShapeError("[SequenceClassificationTask] needs its dataset's description and its training split first");
  target_ = dataset_.target;
}

EpochPlan SequenceClassificationTask::plan_epoch(uint64_t epoch) const {
  if (options_.batching == ClassificationOptions::Batching::Shuffled)
    return shuffled_batches(static_cast<int64_t>(train().size()), limits_.max_sentences, seed_, epoch);
  return length_batches(train().lengths, limits_, seed_, epoch);
}

void SequenceClassificationTask::configure_model(ModelConfig& model, bool vocab_size_given,
                                             const std::string& spec_path) const {
  const auto vocab = static_cast<int64_t>(vocabulary_.size());
  if (!vocab_size_given || model.vocab_size == 0) {
    model.vocab_size = vocab;
  } else if (model.vocab_size < vocab) {
    throw ConfigError(spec_path + ": model.vocab_size=" + std::to_string(model.vocab_size) +
                      " is smaller than the dictionary (" + std::to_string(vocab) +
                      " ids); remove the key to fill it in from the dictionary");
  }
  if (model.num_classes != target_.num_classes)
    spdlog::info("model.num_classes: {} for {} ({})", target_.num_classes, dataset_.name,
                 target_.regression ? "one output, regression" : "its classes");
  model.num_classes = target_.num_classes;
}

int64_t SequenceClassificationTask::longest_sequence() const {
  return *std::max_element(train().lengths.begin(), train().lengths.end());
}

int64_t SequenceClassificationTask::positions_per_batch() const {
  return limits_.max_sentences * longest_sequence() * (train().dual() ? 2 : 1);
}

BatchStream SequenceClassificationTask::training_stream() const {
  return BatchStream(static_cast<int64_t>(train().size()), [this](uint64_t epoch) { return plan_epoch(epoch); },
                     "example");
}

void SequenceClassificationTask::fill_batch(const std::vector<int64_t>& ids, uint64_t /*epoch*/, Batch& batch) const {
  auto* b = dynamic_cast<SequenceBatch*>(&batch);
  if (!b) throw ShapeError("[SequenceClassificationTask] the batch was not made by new_batch()");
  make_sequence_batch(train(), ids, target_.regression, pad_, *b);
}

const LabelledSequences* SequenceClassificationTask::find(const std::string& split) const {
  for (const LabelledSequences& s : splits_)
    if (s.name == split && s.role != SentenceSplit::Role::Train) return &s;
  return nullptr;
}

bool SequenceClassificationTask::has_split(const std::string& split) const {
  const LabelledSequences* s = find(split);
  return s && s->labelled && !(s->size() == 0);
}

std::vector<std::string> SequenceClassificationTask::extra_eval_splits() const {
  std::vector<std::string> out;
  for (const LabelledSequences& s : splits_)
    if (s.role != SentenceSplit::Role::Train && s.labelled && s.name != kValid && s.name != kTest)
      out.push_back(s.name);
  return out;
}

SequenceClassificationTask::Outputs SequenceClassificationTask::run_split(TransNormerModel& model,
                                                                  const LabelledSequences& split,
                                                                  int64_t batch_size) const {
  Tape tape;
  tape.set_enabled(false);
  Rng rng(0);
  ForwardContext ctx{tape, false, rng, nullptr};
  Outputs out;
  out.width = target_.num_classes;
  out.logits.assign(split.size() * out.width, 0.0f);
  double loss_sum = 0;
  SequenceBatch batch;
  // With several ranks each takes every size-th batch (the batches are sorted by length, so the
  // shares cost alike) and the logits, zero elsewhere, and the loss sums are added up. Longest
  // batch first: each later batch fits the buffers the memory pool kept from the one before, where
  // growing batches took new pages every time (a fifth of a Text evaluation went to page faults).
  Communicator& ranks = this->ranks();
  const std::vector<std::vector<int64_t>> batches = eval_batches(split.lengths, {.max_sentences = batch_size});
  Progress progress("evaluating", "examples", static_cast<int64_t>(split.size()));
  int64_t done = 0;
  for (size_t k = batches.size(); k-- > 0;) {
    const std::vector<int64_t>& ids = batches[k];
    if (static_cast<int>(k % static_cast<size_t>(ranks.size())) != ranks.rank()) continue;
    throw_if_cancelled();
    progress.advance(done * ranks.size());
    done += static_cast<int64_t>(ids.size());
    make_sequence_batch(split, ids, target_.regression, pad_, batch);
    Var logits = sequence_logits(ctx, model, batch);
    const float* lp = logits->value.data();
    for (size_t r = 0; r < ids.size(); ++r)
      std::copy_n(lp + r * out.width, out.width, out.logits.begin() + ids[r] * out.width);
    if (split.labelled) {
      const LmLoss l = target_.regression ? mse_loss(tape, logits, batch.scores) : cross_entropy(tape, logits, batch.labels);
      loss_sum += l.sum_nll;
    }
  }
  if (ranks.size() > 1) {
    ranks.sum(out.logits.data(), static_cast<int64_t>(out.logits.size()));
    ranks.sum(&loss_sum, 1);
  }
  if (split.labelled) out.loss = loss_sum / static_cast<double>(split.size());
  return out;
}

namespace {

/// The class of the largest logit; kNoPrediction when a logit is not finite (an evaluation that
/// overflowed: such an example counts as wrong, not as class 0).
int32_t argmax(const float* row, int64_t n) {
  if (!std::all_of(row, row + n, [](float x) { return std::isfinite(x); })) return kNoPrediction;
  return static_cast<int32_t>(std::max_element(row, row + n) - row);
}

/// Softmax probability of class k of a logit row.
double probability(const float* row, int64_t n, int32_t k) {
  const float top = *std::max_element(row, row + n);
  double sum = 0;
  for (int64_t j = 0; j < n; ++j) sum += std::exp(static_cast<double>(row[j] - top));
  return std::exp(static_cast<double>(row[k] - top)) / sum;
}

}  // namespace

Metrics SequenceClassificationTask::evaluate(TransNormerModel& model, const std::string& split, int64_t batch_size,
                                             int64_t max_examples) const {
  const LabelledSequences* s = find(split);
  if (!s || !s->labelled) throw ConfigError("the spec has no labelled " + split + " split");
  LabelledSequences part;  // max_examples of the split's examples, spread over it, when that is fewer
  if (max_examples > 0 && static_cast<size_t>(max_examples) < s->size()) {
    part = s->spread(static_cast<size_t>(max_examples));
    s = &part;
  }
  const Outputs out = run_split(model, *s, batch_size);
  Metrics m;
  m.set("loss", *out.loss);
  std::vector<nlohmann::json>& records = predictions_[split];
  records.clear();
  const size_t n = s->size();
  if (target_.regression) {
    std::vector<double> predicted(out.logits.begin(), out.logits.end());
    for (const auto& [name, value] : regression_metrics(target_.metrics, predicted, s->targets)) m.set(name, value);
    for (size_t i = 0; i < n; ++i)
      records.push_back({{"id", s->ids[i]}, {"label", s->targets[i]}, {"prediction", predicted[i]},
                         {"score", predicted[i]}});
  } else {
    std::vector<int32_t> predicted(n);
    for (size_t i = 0; i < n; ++i) predicted[i] = argmax(out.logits.data() + i * out.width, out.width);
    for (const auto& [name, value] : classification_metrics(target_.metrics, predicted, s->labels)) m.set(name, value);
    int64_t none = 0;
    for (size_t i = 0; i < n; ++i) {
      const float* row = out.logits.data() + i * out.width;
      const bool has = predicted[i] != kNoPrediction;
      none += !has;
      records.push_back({{"id", s->ids[i]},
                         {"label", target_.label_names[s->labels[i]]},
                         {"prediction", has ? nlohmann::json(target_.label_names[predicted[i]]) : nlohmann::json()},
                         {"score", has ? nlohmann::json(probability(row, out.width, predicted[i])) : nlohmann::json()}});
    }
    if (none > 0) m.set_count("non_finite", none);
  }
  m.set_count("examples", static_cast<int64_t>(n));
  return m;
}

std::vector<std::string> SequenceClassificationTask::metric_names() const {
  std::vector<std::string> names{"loss"};
  names.insert(names.end(), target_.metrics.begin(), target_.metrics.end());
  names.push_back("examples");  // and "non_finite" when some prediction was not finite
  return names;
}

std::vector<nlohmann::json> SequenceClassificationTask::predictions(const std::string& split) const {
  const auto it = predictions_.find(split);
  return it == predictions_.end() ? std::vector<nlohmann::json>{} : it->second;
}

std::vector<std::string> SequenceClassificationTask::write_submission(TransNormerModel& model, const std::string& split,
                                                                  int64_t batch_size, const std::string& dir) const {
  std::vector<const LabelledSequences*> chosen;
  for (const LabelledSequences& s : splits_) {
    if (s.role == SentenceSplit::Role::Train) continue;
    const bool is_test_role = s.role == SentenceSplit::Role::Test;
    if (s.name == split || (split == kTest && is_test_role) || (split == kValid && s.role == SentenceSplit::Role::Valid))
      chosen.push_back(&s);
  }
  if (chosen.empty())
    throw ConfigError("split \"" + split + "\": " + dataset_.name +
                      " has no such split in this run's config; use --split test or valid");
  std::filesystem::create_directories(dir);
  std::vector<std::string> written;
  for (const LabelledSequences* s : chosen) {
    std::string name = dataset_.submission_name(s->file);
    if (name.empty()) name = dataset_.name + "." + s->name + ".tsv";
    const Outputs out = run_split(model, *s, batch_size);
    std::string text = "index\tprediction\n";
    for (size_t i = 0; i < s->size(); ++i) {
      const float* row = out.logits.data() + i * out.width;
      const int32_t k = target_.regression ? 0 : argmax(row, out.width);
      if (k == kNoPrediction || (target_.regression && !std::isfinite(row[0])))
        throw std::runtime_error("the model's output for " + s->name + " example " + s->ids[i] +
                                 " is not finite; no submission written");
      text += s->ids[i] + "\t" +
              (target_.regression ? dataset_.prediction_text(-1, row[0]) : dataset_.prediction_text(k, 0.0)) + "\n";
    }
    const std::string path = (std::filesystem::path(dir) / name).string();
    write_own_file(path, text, "predict");
    spdlog::info("{}: {} predictions of {} ({})", path, s->size(), s->name, s->file);
    written.push_back(path);
  }
  return written;
}

TaskReport SequenceClassificationTask::report() const {
  TaskReport r;
  for (const LabelledSequences& s : splits_) r.data[s.name] = s.file;
  // The floor a classifier must beat: the training split's majority class (regression: its mean
  // score) predicted for every example of each labelled evaluation split, under the same metrics.
  for (const LabelledSequences& s : splits_) {
    if (s.role == SentenceSplit::Role::Train || !s.labelled || (s.size() == 0)) continue;
    const size_t n = s.size();
    if (target_.regression) {
      double mean = 0;
      for (double t : train().targets) mean += t;
      mean /= static_cast<double>(train().targets.size());
      for (const auto& [name, value] : regression_metrics(target_.metrics, std::vector<double>(n, mean), s.targets))
        r.baselines["constant_" + s.name + "_" + name] = value;
    } else {
      std::vector<int64_t> counts(target_.num_classes, 0);
      for (int32_t label : train().labels) ++counts[label];
      const auto majority = static_cast<int32_t>(std::max_element(counts.begin(), counts.end()) - counts.begin());
      for (const auto& [name, value] :
           classification_metrics(target_.metrics, std::vector<int32_t>(n, majority), s.labels))
        r.baselines["majority_" + s.name + "_" + name] = value;
    }
  }
  return r;
}

BatchLoss SequenceClassificationTask::loss(ForwardContext& ctx, TransNormerModel& model, const Batch& batch) const {
  return objective_.loss(ctx, model, batch);
}

double SequenceClassificationTask::train_padding_fraction() const {
  return padding_fraction(train().lengths, plan_epoch(0));
}

std::unique_ptr<SequenceClassificationTask> make_classification_task(const ExperimentSpec& spec, EncodedData data) {
  for (const LabelledSequences& s : data.splits)
    spdlog::info("data: {} {}: {} examples from {}, {} {} cut to {} tokens{}", data.dataset.name, s.name, s.size(),
                 s.file, s.truncated, s.dual() ? "documents" : "examples", spec.data->tokens_per_sample(),
                 s.skipped ? fmt::format(", {} malformed rows skipped", s.skipped) : "");
  const auto train_examples = static_cast<int64_t>(data.splits.front().size());
  if (spec.train.batch_size > train_examples)
    throw ConfigError(spec.path + ": train.batch_size: " + std::to_string(spec.train.batch_size) +
                      " is larger than the " + std::to_string(train_examples) + " training examples (" +
                      data.splits.front().file +
                      "); lower train.batch_size, or train on more data (data.max_examples, a smaller held-out "
                      "validation fraction)");
  const auto* options = dynamic_cast<const ClassificationOptions*>(spec.task_options.get());
  std::unique_ptr<SequenceClassificationTask> task;
  try {
    task = std::make_unique<SequenceClassificationTask>(std::move(data), spec.data,
                                                        options ? *options : ClassificationOptions{},
                                                        spec.train.batch_size, spec.train.seed);
  } catch (const ConfigError& e) {  // the token budget cannot hold an example (length_batches)
    throw ConfigError(spec.path + ": task.max_tokens: " + e.what() +
                      "; raise task.max_tokens (0: no budget), or lower the data's longest length (data.max_length, "
                      "data.max_positions)");
  }
  spdlog::info("batching: {:.1f} % of the training positions are padding (batch {})",
               100.0 * task->train_padding_fraction(), spec.train.batch_size);
  return task;
}

std::unique_ptr<SequenceBatch> random_sequence_batch(const ModelConfig& config, int64_t rows, int64_t seq_len,
                                                     uint64_t seed) {
  auto b = std::make_unique<SequenceBatch>();
  b->rows = rows;
  b->seq_len = seq_len;
  b->dual = config.head == HeadKind::Retrieval;
  const int64_t positions = rows * seq_len * (b->dual ? 2 : 1);
  Rng data_rng(seed + 1);
  b->inputs.resize(positions);
  for (int32_t& id : b->inputs)
    id = static_cast<int32_t>(data_rng.next_u64() % static_cast<uint64_t>(config.vocab_size));
  b->key_valid.assign(positions, 1);
  b->labels.resize(rows);
  for (int32_t& l : b->labels) l = static_cast<int32_t>(data_rng.next_u64() % static_cast<uint64_t>(config.num_classes));
  b->scores.assign(rows, 0.0f);
  b->tokens = positions;
  return b;
}

}  // namespace tn
