#pragma once
// The task registry: the spec's `task:` names an entry (or is a mapping with `name` and the task's
// options, experiments/tasks/task_options.h), whose factory builds the task's data from the spec.
// A new task adds its own files and one entry to the table in registry.cpp; the runner, the
// verbs, sweeps and reports need no change.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "experiments/spec.h"
#include "core/config/json_section.h"
#include "experiments/tasks/task.h"
#include "experiments/tasks/task_options.h"

namespace tn {

struct TaskEntry {
  std::string_view name;         // value of `task:`
  std::string_view description;  // one line
  /// Builds the task from a resolved spec, reading data under `data_root`. Throws ConfigError
  /// (a reader or model the task cannot use) or DataError (missing or malformed files).
  std::unique_ptr<Task> (*make)(const ExperimentSpec& spec, const std::string& data_root);
  /// Resolves the task's options from its section (`name` included; an empty section when `task:`
  /// is only the name), checking every key; throws ConfigIssue. Null: the task takes no options.
  std::shared_ptr<const TaskOptions> (*options)(const JsonSection& section) = nullptr;
};

/// Every task, in a stable order (the first is the default).
const std::vector<TaskEntry>& task_table();

/// The task `spec.task` names. Throws ConfigError for an unknown name (a resolved spec has a
/// known one) and whatever the task's factory throws.
std::unique_ptr<Task> make_task(const ExperimentSpec& spec, const std::string& data_root);

}  // namespace tn
