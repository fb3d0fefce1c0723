#include "experiments/runner/load_run.h"

#include <filesystem>

#include "core/error.h"
#include "experiments/tasks/registry.h"

namespace tn {

LoadedRun load_run(const std::string& target, const std::string& data_root) {
  std::filesystem::path run_dir = target;
  if (std::filesystem::is_regular_file(run_dir))  // a config: its default run directory
    run_dir = std::filesystem::path("runs") / load_spec(target).name;
  const std::string config = (run_dir / "config.yaml").string();
  const std::string ckpt_path = (run_dir / "checkpoint.safetensors").string();
  if (!std::filesystem::exists(config) || !std::filesystem::exists(ckpt_path))
    throw DataError(run_dir.string() + ": not a run directory (needs config.yaml and "
                    "checkpoint.safetensors); train first or pass --checkpoint");
  LoadedRun run;
  run.dir = run_dir.string();
  run.spec = load_spec(config);
  run.checkpoint = load_checkpoint(ckpt_path);
  run.task = make_task(run.spec, data_root);
  if (run.checkpoint.vocab != run.task->vocabulary())
    throw DataError(ckpt_path + ": its vocabulary differs from the one built from " +
                    run.task->report().data["train"] + "; is --data-root pointing at other data?");
  return run;
}

}  // namespace tn
