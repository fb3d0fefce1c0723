#pragma once
// `train --resume`: refusing a run directory that holds another experiment, and restoring the
// weights, optimizer moments, batch-stream place, dropout generator and totals of its last
// checkpoint, so the continued run equals an uninterrupted one exactly (same thread count).
#include <optional>

#include "experiments/runner/run_dir.h"
#include "experiments/runner/train_state.h"
#include "experiments/runner/train_step.h"
#include "experiments/spec/spec.h"
#include "experiments/tasks/task.h"

namespace tn {

/// Checks that `run` holds a run that can continue as `spec` (resolved, vocab_size filled):
/// config.yaml, checkpoint.safetensors and a train state exist, and config.yaml resolves to the
/// same experiment, compared as typed specs, where only train.max_steps, train.threads and the
/// schedule's total_steps may differ (a longer cosine or polynomial decay; the change is logged). Throws ConfigError naming the missing file, or config.yaml:line and the first key that
/// differs with both values (with a hint when a schedule's total_steps followed max_steps).
void check_resumable(const RunDir& run, const ExperimentSpec& spec);

/// For `train --resume`: the summary of a run in `run` that is finished as `spec` asks (summary.json
/// records train.max_steps steps, or an early stop by patience at most that many), after logging that there
/// is nothing to resume and the command that trains longer; nullopt when there is something to do
/// (or no readable summary.json: the run's own checks then speak). Reads only.
std::optional<RunSummary> finished_run(const std::string& run, const ExperimentSpec& spec);

/// Loads the checkpoint's weights into `model`, and the train state written with it (the current
/// file, or the previous one when the run stopped between the two writes; that one becomes the
/// current) into `step` (moments, AdamW steps, dropout generator) and `stream` (the training
/// stream's place); `task` gives the vocabulary the checkpoint must share.
/// Returns the rest. Throws DataError when no state matches the checkpoint's step or a file is
/// corrupt, ConfigError when train.max_steps is below the steps already done.
TrainState restore_run(const RunDir& run, const ExperimentSpec& spec, TransNormerModel& model, TrainStep& step,
                       const Task& task, BatchStream& stream);

}  // namespace tn
