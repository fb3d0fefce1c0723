#pragma once
// A finished (or checkpointed) run directory brought back for evaluation or prediction: its
// resolved config, its checkpoint's model, and its task rebuilt from the data.
#include <memory>
#include <string>

#include "experiments/spec/spec.h"
#include "experiments/tasks/task.h"
#include "layers/persistence/checkpoint.h"

namespace tn {

struct LoadedRun {
  std::string dir;
  ExperimentSpec spec;
  LoadedCheckpoint checkpoint;
  std::unique_ptr<Task> task;
};

/// Loads `target` (a run directory, the config.yaml inside one, or a spec file meaning its default
/// runs/<name>): config.yaml,
/// checkpoint.safetensors, and the task from the data under `data_root`. Throws DataError when the
/// directory lacks those files or the checkpoint's vocabulary differs from the task's (other
/// data), and whatever load_spec, load_checkpoint and make_task throw.
/// With `best`, the weights of checkpoint_best.safetensors (train.checkpoint.best_metric) instead:
/// DataError when the run kept none, naming the key that makes it.
LoadedRun load_run(const std::string& target, const std::string& data_root, bool best = false);

/// "" for a finished run (its summary.json is there); else one line saying that `run` is not
/// finished: its checkpoint's step of train.max_steps, how its last session ended (run.json), and
/// the command that continues it. For the verbs that read a run's weights (eval, predict).
std::string unfinished_note(const LoadedRun& run);

}  // namespace tn
