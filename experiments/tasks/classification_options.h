#pragma once
// The options of the classification tasks (sentence_prediction, sequence_classification,
// retrieval): how an epoch's training batches are formed.
//   batching: by_length   fairseq's scheme (data/batching/length_batches.h): examples of similar
//                         length batched together, few padded positions (the GLUE default)
//   batching: shuffled    a fresh random mix every epoch, each batch padded to its longest
//                         example, as the official LRA loaders do (the LRA default)
//   max_tokens: N         by_length only: also cap a batch at N padded positions (0: no cap)
#include <cstdint>
#include <memory>

#include "core/platform/config/json_section.h"
#include "experiments/spec/task_options.h"

namespace tn {

struct ClassificationOptions final : TaskOptions {
  enum class Batching { ByLength, Shuffled };
  Batching batching = Batching::ByLength;
  int64_t max_tokens = 0;

  nlohmann::ordered_json to_json() const override;
  bool equals(const TaskOptions& other) const override;
};

/// Resolves a task section (its `name` already read) over `defaults`. Throws ConfigIssue at
/// task.<key> with the fix.
std::shared_ptr<const TaskOptions> resolve_classification_options(const JsonSection& section,
                                                                  const ClassificationOptions& defaults);

}  // namespace tn
