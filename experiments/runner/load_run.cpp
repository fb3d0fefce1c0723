#include "experiments/runner/load_run.h"

#include <filesystem>

#include "core/error.h"
#include "core/platform/process/shell_quote.h"
#include "experiments/outputs/last_session.h"
#include "experiments/runner/best_checkpoint.h"
#include "experiments/tasks/registry.h"
#include "layers/persistence/checkpoint.h"

namespace tn {

LoadedRun load_run(const std::string& target, const std::string& data_root, bool best) {
  std::filesystem::path run_dir = target;
  if (std::filesystem::is_regular_file(run_dir)) {
    const std::filesystem::path parent = run_dir.parent_path().empty() ? "." : run_dir.parent_path();
    if (run_dir.filename() == "config.yaml" && std::filesystem::exists(parent / "checkpoint.safetensors"))
      run_dir = parent;  // a run's own config.yaml: that run
    else  // the spec it was trained from: its default run directory
      run_dir = std::filesystem::path("runs") / load_spec(target).name;
  }
  const std::string config = (run_dir / "config.yaml").string();
  const std::string ckpt_path = (run_dir / "checkpoint.safetensors").string();
  // A folder without a checkpoint: what it is instead (a sweep folder, a smoke run), as --checkpoint says.
  if (std::filesystem::is_directory(run_dir) && std::filesystem::exists(run_dir / "sweep.json"))
    checkpoint_file(run_dir.string());
  if (std::filesystem::exists(config) && !std::filesystem::exists(ckpt_path)) checkpoint_file(run_dir.string());
  if (!std::filesystem::exists(config) || !std::filesystem::exists(ckpt_path))
    throw DataError(run_dir.string() + ": not a run directory (needs config.yaml and "
                    "checkpoint.safetensors); train it first (eval can also read a checkpoint file: eval --checkpoint FILE)");
  const std::string weights = best ? (run_dir / kBestCheckpointFile).string() : ckpt_path;
  if (best && !std::filesystem::exists(weights))
    throw DataError(weights + " does not exist: the run kept no best checkpoint; train with "
                    "train.checkpoint.best_metric (e.g. valid.accuracy) to keep one, or leave out --best");
  LoadedRun run;
  run.dir = run_dir.string();
  run.spec = load_spec(config);
  run.checkpoint = load_checkpoint(weights);
  run.task = make_task(run.spec, data_root);
  if (run.checkpoint.vocab != run.task->vocabulary())
    throw DataError(ckpt_path + ": its vocabulary differs from the one built from " +
                    run.task->report().data["train"] + "; is --data-root pointing at other data?");
  return run;
}

std::string unfinished_note(const LoadedRun& run) {
  if (std::filesystem::exists(std::filesystem::path(run.dir) / "summary.json")) return "";
  const std::string outcome = last_session(run.dir).outcome;
  const std::string step = run.checkpoint.step >= 0 ? std::to_string(run.checkpoint.step) : std::string("?");
  return shell_quote(run.dir) + " is not finished (its checkpoint is of step " + step + " of " +
         std::to_string(run.spec.train.max_steps) + (outcome.empty() ? "" : "; last session: " + outcome) +
         "): the weights used are those of that step; continue the run with `transnormer train --resume " +
         shell_quote(run.dir) + "`";
}

}  // namespace tn
