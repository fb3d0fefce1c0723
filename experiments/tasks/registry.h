#pragma once
// The task registry: the spec's `task:` names an entry (or is a mapping with `name` and the task's
// options, experiments/spec/task_options.h), whose factory builds the task's data from the spec.
// A new task adds its own files and one entry to the table in registry.cpp; the runner, the
// verbs, sweeps and reports need no change.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "experiments/spec/spec.h"
#include "core/platform/config/json_section.h"
#include "experiments/tasks/task.h"
#include "experiments/spec/task_options.h"
#include "layers/persistence/checkpoint.h"

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
  /// The task that scores a checkpoint alone on one data file (`eval --checkpoint FILE --data F
  /// --seq-len L`), for a checkpoint of this task's head; null when the checkpoint is another's.
  /// Throws DataError for a checkpoint it cannot read the data with (no vocabulary). Null: the
  /// task scores checkpoints only through their run.
  std::unique_ptr<Task> (*checkpoint_task)(const LoadedCheckpoint& checkpoint, const std::string& checkpoint_path,
                                           const std::string& data_file, int64_t seq_len, int64_t batch_size) = nullptr;
  /// `bench`'s work for a model of this task's head: rows × seq_len random inputs (from `seed`)
  /// and the task's objective; an empty BenchWork for a model of another head. Throws ConfigError
  /// for a model the random batch cannot serve (naming the key). Null: bench never times it.
  BenchWork (*bench_work)(const ModelConfig& config, int64_t rows, int64_t seq_len, uint64_t seed) = nullptr;
};

/// Every task, in a stable order (the first is the default): the table of registry.cpp, then
/// those add_task added.
const std::vector<TaskEntry>& task_table();

/// Adds a task that lives outside this library (a program's own, or the test suite's walkthrough
/// examples, tests/experiments/walkthroughs/) after the table's, as its own line in registry.cpp
/// would. Call it before any spec is resolved, from one thread; `entry.name` and `description`
/// must outlive the process (string literals). Throws std::invalid_argument for a name already in
/// the table.
void add_task(const TaskEntry& entry);

/// `bench`'s work for `config`: the first entry's whose head it is. Throws ConfigError when no
/// task benches the model's head.
BenchWork make_bench_work(const ModelConfig& config, int64_t rows, int64_t seq_len, uint64_t seed);

/// The task `spec.task` names. Throws ConfigError for an unknown name (a resolved spec has a
/// known one) and whatever the task's factory throws.
std::unique_ptr<Task> make_task(const ExperimentSpec& spec, const std::string& data_root);

/// The task of the first entry whose checkpoint_task takes `checkpoint` (TaskEntry::checkpoint_task).
/// ConfigError naming the checkpoint's head and the run-based commands when none does.
std::unique_ptr<Task> make_checkpoint_task(const LoadedCheckpoint& checkpoint, const std::string& checkpoint_path,
                                           const std::string& data_file, int64_t seq_len, int64_t batch_size);

}  // namespace tn
