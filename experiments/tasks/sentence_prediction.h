#pragma once
// The sentence_prediction task: an encoder with the classification head fine-tuned on one
// sentence-level dataset (GLUE; paper §3.2, Table 5), as fairseq's sentence_prediction task does
// it: classes with cross-entropy, or one output with the mean squared error for a regression
// target (STS-B). Inputs are RoBERTa's layout (experiments/tasks/sentence_data.h).
// Training batches: length_batches (data/batching/length_batches.h) of at most train.batch_size
// examples, fresh for every epoch from (train.seed, epoch), each padded to its longest example with
// a padding mask. Evaluation batches are sorted by length; results go back to file order.
// Metrics: loss (cross-entropy in nats, or MSE), then the dataset's own (accuracy, f1, mcc,
// pearson, spearman). Every evaluation keeps its per-example predictions (predictions()).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/batching/length_batches.h"
#include "experiments/spec.h"
#include "experiments/tasks/sentence_data.h"
#include "experiments/tasks/task.h"

namespace tn {

struct SentenceBatch final : Batch {
  int64_t rows = 0, seq_len = 0;
  std::vector<int32_t> inputs;     // [rows · seq_len], padded with <pad>
  std::vector<uint8_t> key_valid;  // [rows · seq_len]
  std::vector<int32_t> labels;     // [rows] classes (classification)
  std::vector<float> scores;       // [rows] regression targets
  bool regression = false;
  int64_t targets() const override { return rows; }
  int64_t positions() const override { return tokens; }
  int64_t tokens = 0;              // real tokens of the batch
};

/// Fills `batch` with the examples `ids` of `split`, padded with `pad`. Throws ShapeError for an
/// empty list or an index outside the split.
void make_sentence_batch(const EncodedSentences& split, const std::vector<int64_t>& ids, bool regression, int32_t pad,
                         SentenceBatch& batch);

/// The classification head's logits [B, C] of a SentenceBatch, pooled under its padding mask
/// (ctx.key_valid is set for the forward and restored after).
Var sentence_logits(ForwardContext& ctx, TransNormerModel& model, const SentenceBatch& batch);

/// The loss of a SentenceBatch: the classification head's logits [B, C] (pooled with the padding
/// mask), then cross-entropy against the classes or MSE against the targets.
class SentencePredictionObjective : public Objective {
 public:
  BatchLoss loss(ForwardContext& ctx, TransNormerModel& model, const Batch& batch) const override;
};

class SentencePredictionTask final : public Task {
 public:
  SentencePredictionTask(std::vector<EncodedSentences> splits, std::shared_ptr<const DataSpec> data,
                         std::vector<std::string> vocabulary, int32_t pad, int64_t batch_size, uint64_t seed);

  void configure_model(ModelConfig& model, bool vocab_size_given, const std::string& spec_path) const override;
  int64_t positions_per_batch() const override;
  std::unique_ptr<Batch> new_batch() const override { return std::make_unique<SentenceBatch>(); }
  void next_batch(Batch& batch) override;
  nlohmann::json stream_state() const override;
  void restore_stream(const nlohmann::json& state, const std::string& where) override;
  double epochs_done() const override;
  bool has_split(const std::string& split) const override;
  Metrics evaluate(TransNormerModel& model, const std::string& split, int64_t batch_size) const override;
  std::vector<std::string> extra_eval_splits() const override;
  std::vector<nlohmann::json> predictions(const std::string& split) const override;
  std::vector<std::string> write_submission(TransNormerModel& model, const std::string& split, int64_t batch_size,
                                            const std::string& dir) const override;
  std::vector<std::string> vocabulary() const override { return vocabulary_; }
  TaskReport report() const override;
  BatchLoss loss(ForwardContext& ctx, TransNormerModel& model, const Batch& batch) const override;

  /// The padded share of the training positions in epoch 0's batches.
  double train_padding_fraction() const;

 private:
  /// The model's outputs for every example of `split`, in file order: [n, C] logits (C = 1
  /// for regression), and the loss when the split is labelled.
  struct Outputs {
    std::vector<float> logits;
    int64_t width = 0;
    std::optional<double> loss;
  };
  Outputs run_split(TransNormerModel& model, const EncodedSentences& split, int64_t batch_size) const;
  const EncodedSentences* find(const std::string& split) const;
  const EncodedSentences& train() const { return splits_.front(); }
  void plan_epoch();

  std::vector<EncodedSentences> splits_;  // train first
  std::shared_ptr<const DataSpec> data_;
  const SentenceSource* source_;
  SentenceTarget target_;
  std::vector<std::string> vocabulary_;
  int32_t pad_;
  BatchLimits limits_;
  uint64_t seed_;
  int64_t epoch_ = 0, position_ = 0;
  std::vector<std::vector<int64_t>> batches_;
  mutable std::map<std::string, std::vector<nlohmann::json>> predictions_;
  SentencePredictionObjective objective_;
};

/// The registry's factory: checks the model (arch encoder, head classification) and the reader
/// (a SentenceSource), loads the BPE and dictionary, reads and encodes the splits, logs the
/// truncated and skipped examples and the training padding. Throws ConfigError / DataError naming
/// the key or file and the fix.
std::unique_ptr<Task> make_sentence_prediction(const ExperimentSpec& spec, const std::string& data_root);

}  // namespace tn
