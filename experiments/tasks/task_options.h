#pragma once
// A task's own options: the typed home of what belongs to the task rather than the model or the
// data (how its training batches are formed). The spec's `task:` is a task name, or a mapping
// with the name and the task's options:
//   task: sequence_classification
//   task: {name: sequence_classification, batching: shuffled, max_tokens: 0}
// A task entry with options resolves them (experiments/tasks/registry.h); the resolved spec writes
// the mapping with every default filled in.
#include <nlohmann/json.hpp>

namespace tn {

class TaskOptions {
 public:
  virtual ~TaskOptions() = default;
  /// The options as JSON (without `name`), every default filled in.
  virtual nlohmann::ordered_json to_json() const = 0;
  /// Same kind and values.
  virtual bool equals(const TaskOptions& other) const = 0;
};

}  // namespace tn
