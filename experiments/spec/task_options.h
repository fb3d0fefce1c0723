#pragma once
// A task's own options: the typed home of what belongs to the task rather than the model or the
// data (how its training batches are formed). The spec's `task:` is a task name, or a mapping
// with the name and the task's options:
//   task: sequence_classification
//   task: {name: sequence_classification, batching: shuffled, max_tokens: 0}
// A task entry with options resolves them (experiments/tasks/registry.h); the resolved spec writes
// the mapping with every default filled in.
#include <memory>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "core/platform/config/json_section.h"

namespace tn {

class TaskOptions {
 public:
  virtual ~TaskOptions() = default;
  /// The options as JSON (without `name`), every default filled in.
  virtual nlohmann::ordered_json to_json() const = 0;
  /// Same kind and values.
  virtual bool equals(const TaskOptions& other) const = 0;
};

/// A task as a spec names it: its name and, when it takes options, how they are read from the
/// `task:` mapping (throws ConfigIssue naming the key; null: no options).
struct TaskSchema {
  std::string_view name;
  std::shared_ptr<const TaskOptions> (*options)(const JsonSection& section) = nullptr;
};

/// Every task a spec may name, the default first. Defined beside the task table
/// (experiments/tasks/registry.cpp), so the spec reads task names and options without depending
/// on the tasks.
const std::vector<TaskSchema>& task_schemas();

}  // namespace tn
