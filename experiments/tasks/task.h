#pragma once
// The Task interface: what the runner (experiments/runner) needs from a kind of experiment, and
// nothing the runner should know. A task builds its data from the spec, yields training batches
// from a plan the runner streams (saving and restoring its place), computes the loss of a batch, and
// evaluates a split into named metrics. Language modelling (language_modeling.h) is the first;
// a new task adds its own files and one entry to experiments/tasks/registry.cpp.
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/platform/comm/communicator.h"
#include "data/batching/batch_stream.h"
#include "experiments/outputs/metrics.h"
#include "layers/models/transnormer.h"

namespace tn {

/// One training batch of a task, opaque to the runner, reused from step to step (its buffers
/// keep their memory).
class Batch {
 public:
  virtual ~Batch() = default;
  /// The number of loss terms (targets) in the batch: the weight of its mean loss when update_freq
  /// batches make one update.
  virtual int64_t targets() const = 0;
  /// The input tokens the batch runs through the model (padding not counted): what tokens/s
  /// counts. The targets, unless a task scores fewer positions than it reads (masked LM: 15 %;
  /// sentence prediction: one per example).
  virtual int64_t positions() const { return targets(); }
};

/// The loss of one batch: `loss` is the tape's scalar (the mean over `count` terms), `sum` the
/// sum of the per-term losses in nats (for logging), `count` the number of terms.
struct BatchLoss {
  Var loss;
  double sum = 0;
  int64_t count = 0;
};

/// What a training step needs: the loss of a batch under the model. Tasks are objectives; so is
/// the bench's fixed random batch.
class Objective {
 public:
  virtual ~Objective() = default;
  /// Forward in `ctx`'s mode, recording on its tape. Throws ShapeError for a batch of another
  /// task.
  virtual BatchLoss loss(ForwardContext& ctx, TransNormerModel& model, const Batch& batch) const = 0;
};

/// What `bench` times for a model of a task's head: the task's objective on one fixed batch of
/// random inputs (experiments/bench/bench_trainer.h). Empty (no objective) for a model of another head.
struct BenchWork {
  std::unique_ptr<Objective> objective;
  std::unique_ptr<Batch> batch;
};

/// Task-specific facts for summary.json (RunSummary): where each split came from, and reference
/// numbers such as the unigram perplexity.
struct TaskReport {
  std::map<std::string, std::string> data;
  std::map<std::string, std::optional<double>> baselines;
};

class Task : public Objective {
 public:
  /// The split names the runner schedules: validation (checkpointed, train.eval_every) and test
  /// (train.test_every).
  static constexpr const char* kValid = "valid";
  static constexpr const char* kTest = "test";

  /// Checks that the model suits the task and fills in what the data decides (vocab_size, when
  /// `vocab_size_given` is false). Throws ConfigError naming the key and the fix.
  virtual void configure_model(ModelConfig& model, bool vocab_size_given, const std::string& spec_path) const = 0;
  /// Token positions in one training batch (batch_size × sequence length), for the memory check.
  virtual int64_t positions_per_batch() const = 0;
  /// The longest sequence of a training batch, for the memory floor's per-sequence terms (softmax
  /// attention's n²); 0 when unknown.
  virtual int64_t longest_sequence() const { return 0; }

  /// A batch buffer for fill_batch.
  virtual std::unique_ptr<Batch> new_batch() const = 0;
  /// The training data as a stream of batches: its items and their plan per epoch, a pure function
  /// of the epoch (data/batching/batch_stream.h). The runner owns the stream
  /// (experiments/runner/training_batches.h): its place in the train state, its shard under data
  /// parallelism. The plan may read the task, which outlives the stream. An evaluation-only task
  /// gives an empty stream.
  virtual BatchStream training_stream() const = 0;
  /// Fills `batch` (from new_batch) with the training items `ids` of epoch `epoch`: one rank's part
  /// of a planned batch, which may be empty (a batch with fewer items than ranks); the batch then
  /// has no targets and no positions. Throws ShapeError for a batch of another task.
  virtual void fill_batch(const std::vector<int64_t>& ids, uint64_t epoch, Batch& batch) const = 0;

  /// Whether `split` is configured (kValid, kTest).
  virtual bool has_split(const std::string& split) const = 0;
  /// Evaluates `split` in eval mode (no dropout, no tape), batching by `batch_size` samples
  /// (batching does not change the result); with `max_examples` > 0 only that many of its
  /// examples (train.limit_eval_batches): spread evenly over the split for a classifier, the
  /// first ones for a language model (sequences of seq_len). Metrics
  /// always include "loss" (nats). Throws ConfigError for a split that is not configured.
  virtual Metrics evaluate(TransNormerModel& model, const std::string& split, int64_t batch_size,
                           int64_t max_examples = 0) const = 0;

  /// The names evaluate() gives every labelled split, in its order ("loss" first): what
  /// train.checkpoint.best_metric may name, checked before training.
  virtual std::vector<std::string> metric_names() const = 0;

  /// Further labelled splits evaluated with the final ones (MNLI's dev_mismatched); by name.
  virtual std::vector<std::string> extra_eval_splits() const { return {}; }
  /// The per-example records of the latest evaluate() of `split` (JSON objects: id, label,
  /// prediction, score), which the runner writes to predictions/<split>.jsonl; empty for a task
  /// without examples (language modelling).
  virtual std::vector<nlohmann::json> predictions(const std::string& /*split*/) const { return {}; }
  /// Predicts every example of `split`, labelled or not (a GLUE test split), and writes the
  /// task's submission files into `dir`; returns their paths. Throws ConfigError for a task or
  /// split without per-example predictions.
  virtual std::vector<std::string> write_submission(TransNormerModel& model, const std::string& split,
                                                    int64_t batch_size, const std::string& dir) const;

  /// Stored in the checkpoint's metadata as transnormer.vocab (empty: none).
  virtual std::vector<std::string> vocabulary() const = 0;
  /// For summary.json.
  virtual TaskReport report() const = 0;

  /// The ranks that share this task's evaluations (data parallelism: each rank evaluates its part
  /// and the sums are added up, so every rank returns the whole split's metrics). One process
  /// until the runner shares them; `ranks` outlives the task's evaluations.
  void share_evaluations(Communicator& ranks) { ranks_ = &ranks; }
  Communicator& ranks() const { return *ranks_; }
  /// What `data stats` prints of the task's data (its vocabulary, and per split the file, sizes,
  /// lengths, labels), as a JSON object; empty when the task reports nothing beyond report().
  virtual nlohmann::ordered_json data_statistics() const { return nlohmann::ordered_json::object(); }

 private:
  Communicator* ranks_ = &single_process();
};

}  // namespace tn
