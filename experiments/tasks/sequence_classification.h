#pragma once
// The classification core of every sequence-level task: an encoder with the classification head
// (or the retrieval dual encoder) trained on labelled sequences of ids (labelled_sequences.h),
// whatever encoding made them: GLUE through RoBERTa's BPE (sentence_prediction.h; paper §3.2,
// Table 5, as fairseq's sentence_prediction task), LRA through symbol vocabularies (lra_tasks.h;
// paper §3.3, Table 6). Classes with cross-entropy, or one output with the mean squared error for a
// regression target (STS-B).
// Training batches: one BatchStream (data/batching/batch_stream.h) of at most train.batch_size
// examples, planned per (train.seed, epoch) by the task's batching option
// (classification_options.h: by length, or shuffled), each padded to its longest example with a
// padding mask; a dual-encoder batch holds its B first documents then its B second ones, all
// padded to one length. Evaluation batches are sorted by length and score every example (the
// official LRA loaders drop the last partial batch; this does not); results go back to file order.
// Metrics: loss (cross-entropy in nats, or MSE), then the dataset's own (accuracy, f1, mcc,
// pearson, spearman). Every evaluation keeps its per-example predictions (predictions()).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/batching/batch_stream.h"
#include "data/batching/length_batches.h"
#include "experiments/spec/spec.h"
#include "experiments/tasks/classification_options.h"
#include "experiments/tasks/classification_stats.h"
#include "data/encoding/labelled_sequences.h"
#include "experiments/tasks/task.h"

namespace tn {

struct SequenceBatch final : Batch {
  int64_t rows = 0, seq_len = 0;   // examples, and the padded length
  bool dual = false;               // two documents per example: 2·rows sequences
  std::vector<int32_t> inputs;     // [(dual ? 2 : 1) · rows · seq_len], padded with <pad>
  std::vector<uint8_t> key_valid;  // as inputs
  std::vector<int32_t> labels;     // [rows] classes (classification)
  std::vector<float> scores;       // [rows] regression targets
  bool regression = false;
  int64_t targets() const override { return rows; }
  int64_t positions() const override { return tokens; }
  int64_t tokens = 0;              // real tokens of the batch
};

/// Fills `batch` with the examples `ids` of `split`, padded with `pad` (a dual split: the first
/// documents, then the second ones, all padded to the longest of both). Throws ShapeError for an
/// empty list or an index outside the split.
void make_sequence_batch(const LabelledSequences& split, const std::vector<int64_t>& ids, bool regression, int32_t pad,
                         SequenceBatch& batch);

/// The logits [B, C] of a SequenceBatch: the classification head pooled under its padding mask,
/// or the retrieval head over both documents (ctx.key_valid is set for the forward and restored
/// after).
Var sequence_logits(ForwardContext& ctx, TransNormerModel& model, const SequenceBatch& batch);

/// The loss of a SequenceBatch: its logits [B, C], then cross-entropy against the classes or MSE
/// against the targets.
class SequenceClassificationObjective : public Objective {
 public:
  BatchLoss loss(ForwardContext& ctx, TransNormerModel& model, const Batch& batch) const override;
};

/// Random ids in [0, vocab_size) at every position (no padding) and random classes in
/// [0, num_classes), drawn from Rng(seed + 1): `bench`'s batch for the classification head (the
/// reference's train-bench) and, two documents per row, the retrieval head.
std::unique_ptr<SequenceBatch> random_sequence_batch(const ModelConfig& config, int64_t rows, int64_t seq_len,
                                                     uint64_t seed);

class SequenceClassificationTask final : public Task {
 public:
  /// `data.splits` train first, `data.dataset` filled (sentence_dataset_info, image_dataset_info);
  /// `data_spec` (the reader) outlives the task's use of it.
  SequenceClassificationTask(EncodedData data, std::shared_ptr<const DataSpec> data_spec,
                             const ClassificationOptions& options, int64_t batch_size, uint64_t seed);

  void configure_model(ModelConfig& model, bool vocab_size_given, const std::string& spec_path) const override;
  int64_t positions_per_batch() const override;
  int64_t longest_sequence() const override;
  std::unique_ptr<Batch> new_batch() const override { return std::make_unique<SequenceBatch>(); }
  BatchStream training_stream() const override;
  void fill_batch(const std::vector<int64_t>& ids, uint64_t epoch, Batch& batch) const override;
  bool has_split(const std::string& split) const override;
  std::vector<std::string> metric_names() const override;
  Metrics evaluate(TransNormerModel& model, const std::string& split, int64_t batch_size,
                   int64_t max_examples = 0) const override;
  std::vector<std::string> extra_eval_splits() const override;
  std::vector<nlohmann::json> predictions(const std::string& split) const override;
  std::vector<std::string> write_submission(TransNormerModel& model, const std::string& split, int64_t batch_size,
                                            const std::string& dir) const override;
  std::vector<std::string> vocabulary() const override { return vocabulary_; }
  TaskReport report() const override;
  BatchLoss loss(ForwardContext& ctx, TransNormerModel& model, const Batch& batch) const override;

  /// The padded share of the training positions in epoch 0's batches.
  double train_padding_fraction() const;
  /// classification_statistics of the splits (experiments/tasks/classification_stats.h).
  nlohmann::ordered_json data_statistics() const override {
    return classification_statistics(splits_, dataset_, static_cast<int64_t>(vocabulary_.size()));
  }

 private:
  /// The model's outputs for every example of `split`, in file order: [n, C] logits (C = 1
  /// for regression), and the loss when the split is labelled.
  struct Outputs {
    std::vector<float> logits;
    int64_t width = 0;
    std::optional<double> loss;
  };
  Outputs run_split(TransNormerModel& model, const LabelledSequences& split, int64_t batch_size) const;
  const LabelledSequences* find(const std::string& split) const;
  const LabelledSequences& train() const { return splits_.front(); }
  EpochPlan plan_epoch(uint64_t epoch) const;

  std::vector<LabelledSequences> splits_;  // train first
  std::shared_ptr<const DataSpec> data_;
  DatasetInfo dataset_;
  SentenceTarget target_;
  std::vector<std::string> vocabulary_;
  int32_t pad_;
  ClassificationOptions options_;
  BatchLimits limits_;
  uint64_t seed_;
  mutable std::map<std::string, std::vector<nlohmann::json>> predictions_;
  SequenceClassificationObjective objective_;
};

/// What the classification factories share: logs each split (examples, file, truncated and skipped
/// ones) and builds the task with the spec's options, logging the training padding.
std::unique_ptr<SequenceClassificationTask> make_classification_task(const ExperimentSpec& spec, EncodedData data);

}  // namespace tn
