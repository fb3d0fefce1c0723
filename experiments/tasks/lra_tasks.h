#pragma once
// The Long Range Arena token tasks (Tay et al. 2021; the paper, §3.3, Table 6) on the
// classification core (sequence_classification.h), their texts through a symbol vocabulary built
// from the training split (symbol_encoding.h):
//   sequence_classification  one sequence per example, the classification head with mean or last
//                            pooling over the true length (ListOps, Text; model.pooling), or an
//                            image as its pixel levels (Image, Pathfinder: image_encoding.h)
//   retrieval                two documents per example through one encoder, the dual-encoder head
//                            (AAN; model.head: retrieval)
// Both batch as the official loaders do by default (task.batching: shuffled).
#include <memory>
#include <string>

#include "experiments/spec/spec.h"
#include "experiments/tasks/task.h"
#include "experiments/spec/task_options.h"

namespace tn {

/// Factories of the registry: check the model (arch encoder; head classification, or retrieval),
/// the reader (a SentenceSource with a symbol tokenizer, pairs exactly for retrieval; or, for
/// sequence_classification, an ImageSource; model.input.kind linear only for images) and the
/// positions (data.max_length against learned positions), then read and encode the splits. Throw
/// ConfigError / DataError naming the key or file and the fix.
std::unique_ptr<Task> make_sequence_classification(const ExperimentSpec& spec, const std::string& data_root);
std::unique_ptr<Task> make_retrieval(const ExperimentSpec& spec, const std::string& data_root);

/// The registry's bench_work for the classification head (sequence_classification) and the
/// retrieval head (retrieval: two documents per row): random_sequence_batch under cross-entropy.
BenchWork sequence_classification_bench_work(const ModelConfig& config, int64_t rows, int64_t seq_len, uint64_t seed);
BenchWork retrieval_bench_work(const ModelConfig& config, int64_t rows, int64_t seq_len, uint64_t seed);

/// The tasks' options: classification_options.h with batching shuffled.
std::shared_ptr<const TaskOptions> lra_task_options(const JsonSection& section);

}  // namespace tn
