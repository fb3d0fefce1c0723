#pragma once
// The masked_lm task: RoBERTa-style pretraining of an encoder with the mlm head (paper §3.2;
// Liu et al. 2019; fairseq's masked_lm task). Text is read by a text reader with
// `data.tokenizer: gpt2` and packed into complete-mode samples of data.seq_len tokens
// (experiments/tasks/mlm_data.h). Each training sample is masked afresh in every epoch, from
// (train.seed, epoch, sample) (data/batching/mlm_masking.h), so a resumed run sees the same masks;
// validation and test use one fixed mask (seed 0), the same for every run. The loss is the mean
// cross-entropy (nats) over the selected positions only, the head run on those alone.
// Training batches: epoch e visits every sample once in epoch_order(seed, e), batch_size samples
// at a time, each batch padded to its longest sample with <pad> and a padding mask.
// Metrics: loss (nats per scored token), ppl = exp(loss) (fairseq logs bits; 2^bits is the same
// perplexity), tokens (positions scored).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/batching/batch_stream.h"
#include "data/batching/mlm_batch.h"
#include "experiments/spec/spec.h"
#include "experiments/tasks/mlm_data.h"
#include "experiments/tasks/task.h"

namespace tn {

struct MlmTaskBatch final : Batch {
  MlmBatch data;
  int64_t targets() const override { return data.n_targets(); }
  int64_t positions() const override { return positions_; }
  int64_t positions_ = 0;  // real tokens of the batch, set with data
};

/// The masked-LM loss of an MlmTaskBatch: forward with the batch's padding mask, then the token
/// head on the selected positions only (TransNormerModel::token_loss_at).
class MaskedLmObjective : public Objective {
 public:
  BatchLoss loss(ForwardContext& ctx, TransNormerModel& model, const Batch& batch) const override;
};

/// The registry's bench_work for the mlm head: rows × seq_len random tokens in [4, vocab_size − 1)
/// (no special, no <mask>) from Rng(seed + 1), masked as the task masks them (mask id
/// vocab_size − 1), under the masked-LM loss. ConfigError when vocab_size < 6.
BenchWork masked_lm_bench_work(const ModelConfig& config, int64_t rows, int64_t seq_len, uint64_t seed);

class MaskedLmTask final : public Task {
 public:
  /// `vocabulary`: the dictionary's symbols (model ids 0..V-1); `masking.mask_id` = <mask>.
  MaskedLmTask(MlmData data, std::vector<std::string> vocabulary, MlmMasking masking, int32_t pad,
               int64_t seq_len, int64_t batch_size, uint64_t seed);

  void configure_model(ModelConfig& model, bool vocab_size_given, const std::string& spec_path) const override;
  int64_t positions_per_batch() const override { return batch_size_ * seq_len_; }
  int64_t longest_sequence() const override { return seq_len_; }
  std::unique_ptr<Batch> new_batch() const override { return std::make_unique<MlmTaskBatch>(); }
  BatchStream training_stream() const override;
  void fill_batch(const std::vector<int64_t>& ids, uint64_t epoch, Batch& batch) const override;
  bool has_split(const std::string& split) const override;
  std::vector<std::string> metric_names() const override { return {"loss", "ppl", "tokens"}; }
  Metrics evaluate(TransNormerModel& model, const std::string& split, int64_t batch_size,
                   int64_t max_examples = 0) const override;
  std::vector<std::string> vocabulary() const override { return vocabulary_; }
  TaskReport report() const override;
  BatchLoss loss(ForwardContext& ctx, TransNormerModel& model, const Batch& batch) const override;

  const MlmData& data() const { return data_; }
  const MlmMasking& masking() const { return masking_; }

  /// The seed of the evaluation splits' fixed mask.
  static constexpr uint64_t kEvalMaskSeed = 0;

 private:
  const PackedSamples& split_samples(const std::string& split) const;

  MlmData data_;
  std::vector<std::string> vocabulary_;
  MlmMasking masking_;
  int32_t pad_;
  int64_t seq_len_, batch_size_;
  uint64_t seed_;
  MaskedLmObjective objective_;
};

/// The registry's factory: checks the model (arch encoder, head mlm, max_positions >= seq_len
/// with learned positions) and the reader (a text reader with tokenizer gpt2) before reading, loads
/// the BPE and dictionary, encodes and packs the splits. Throws ConfigError / DataError naming the
/// key or file and the fix.
std::unique_ptr<Task> make_masked_lm(const ExperimentSpec& spec, const std::string& data_root);

}  // namespace tn
