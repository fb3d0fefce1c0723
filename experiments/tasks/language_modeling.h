#pragma once
// The language_modeling task: a causal decoder with the lm head, trained on next-token
// cross-entropy over the blocks of a text stream (README "The quickstart's data protocol").
// Training batches: epoch e visits every block once in epoch_order(seed, e), cut into
// consecutive batches of batch_size blocks (the last of an epoch may be smaller). Metrics:
// loss (nats per target), ppl = exp(loss), tokens (targets scored).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/batching/batch_stream.h"
#include "data/batching/lm_blocks.h"
#include "experiments/spec/spec.h"
#include "experiments/tasks/lm_data.h"
#include "experiments/tasks/task.h"
#include "layers/persistence/checkpoint.h"

namespace tn {

/// A language-model batch as the Task interface carries it.
struct LmTaskBatch final : Batch {
  LmBatch data;
  int64_t targets() const override { return data.n_targets; }
};

/// Next-token cross-entropy of an LmTaskBatch through the model's token head: the loss of the
/// language-modelling task and of `bench`'s fixed random batch.
class NextTokenObjective : public Objective {
 public:
  BatchLoss loss(ForwardContext& ctx, TransNormerModel& model, const Batch& batch) const override;
};

class LanguageModelingTask final : public Task {
 public:
  /// `data.train` may be empty for an evaluation-only task (eval --checkpoint); training then
  /// throws ShapeError. seq_len >= 1, batch_size >= 1.
  LanguageModelingTask(LmData data, int64_t seq_len, int64_t batch_size, uint64_t seed);

  void configure_model(ModelConfig& model, bool vocab_size_given, const std::string& spec_path) const override;
  int64_t positions_per_batch() const override;
  int64_t longest_sequence() const override { return seq_len_; }
  std::unique_ptr<Batch> new_batch() const override;
  BatchStream training_stream() const override;
  void fill_batch(const std::vector<int64_t>& ids, uint64_t epoch, Batch& batch) const override;
  bool has_split(const std::string& split) const override;
  std::vector<std::string> metric_names() const override { return {"loss", "ppl", "tokens"}; }
  Metrics evaluate(TransNormerModel& model, const std::string& split, int64_t batch_size,
                   int64_t max_examples = 0) const override;
  std::vector<std::string> vocabulary() const override { return data_.vocab.tokens(); }
  TaskReport report() const override;
  BatchLoss loss(ForwardContext& ctx, TransNormerModel& model, const Batch& batch) const override;
  /// The vocabulary size, and per split its file, lines, tokens and share of <unk> (counted when
  /// the task is built, before the training stream goes into its blocks).
  nlohmann::ordered_json data_statistics() const override { return statistics_; }

  /// The vocabulary and the valid/test streams (the training stream lives in the blocks).
  const LmData& data() const { return data_; }

 private:
  const std::vector<int32_t>& split_stream(const std::string& split) const;

  LmData data_;  // train moved into blocks_
  nlohmann::ordered_json statistics_;  // data_statistics(), of data_ before that move
  int64_t seq_len_, batch_size_;
  LmBlocks blocks_;
  uint64_t seed_;
  NextTokenObjective objective_;
};

/// The registry's factory: checks the model (arch decoder, head lm) before reading anything,
/// reads the spec's text through its reader (which must be a TextSource), builds the vocabulary
/// and checks the training split (has targets, holds at least one block of data.seq_len).
/// Throws ConfigError / DataError naming the key or file and the fix.
std::unique_ptr<Task> make_language_modeling(const ExperimentSpec& spec, const std::string& data_root);

/// The registry's checkpoint_task: for a checkpoint with the lm head, a task whose test split is
/// `data_file` (a .tokens file) encoded with the checkpoint's own vocabulary, in blocks of
/// `seq_len`; nullptr for another head. DataError when the checkpoint holds no vocabulary.
std::unique_ptr<Task> language_modeling_for_checkpoint(const LoadedCheckpoint& checkpoint,
                                                       const std::string& checkpoint_path, const std::string& data_file,
                                                       int64_t seq_len, int64_t batch_size);

/// The registry's bench_work for the lm head: rows × seq_len random tokens and targets in
/// [0, vocab_size), drawn interleaved (token, target) from Rng(seed + 1), under next-token
/// cross-entropy.
BenchWork language_modeling_bench_work(const ModelConfig& config, int64_t rows, int64_t seq_len, uint64_t seed);

}  // namespace tn
