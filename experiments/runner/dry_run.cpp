#include "experiments/runner/dry_run.h"

#include <spdlog/fmt/fmt.h>

#include <filesystem>

#include "core/runtime/dnnl/engine.h"
#include "experiments/runner/best_checkpoint.h"
#include "experiments/runner/memory_check.h"
#include "experiments/runner/model_from_data.h"
#include "experiments/runner/resume.h"
#include "experiments/runner/run_dir.h"
#include "experiments/runner/warm_start.h"
#include "experiments/tasks/registry.h"
#include "layers/persistence/init_from.h"

namespace tn {

namespace {

/// The run directory's line, after the checks a run makes of it.
std::string run_dir_line(const RunOptions& options) {
  check_run_dir(options.out_dir, options.resume, options.overwrite, options.records_only);
  if (options.resume) return "# run directory: " + options.out_dir + " (resumed from its last checkpoint)\n";
  if (holds_run(options.out_dir))
    return "# run directory: " + options.out_dir + " (holds a run: --overwrite would delete its files)\n";
  return "# run directory: " + options.out_dir + (std::filesystem::exists(options.out_dir) ? "\n" : " (new)\n");
}

}  // namespace

std::string dry_run(ExperimentSpec spec, const RunOptions& options) {
  const std::string dir = run_dir_line(options);
  // As the run checks it (ConfigError naming train.init_from); a resumed run has its weights.
  std::string init_from;
  if (!options.resume && !spec.train.init_from.empty()) {
    init_from = options.records_only ? smoke_init_from(spec.train.init_from) : init_from_checkpoint_path(spec.train.init_from);
    if (init_from.empty()) spec.train.init_from.clear();
  }
  const std::unique_ptr<Task> task = make_task(spec, options.data_root);
  configure_model_from_data(*task, spec);
  const std::string validation_warning = check_validation_plan(*task, spec.train, spec.path);
  // The folder exists (check_run_dir): the run's own resume checks, with the spec as the run
  // would have it, nothing written.
  if (options.resume) check_resumable(RunDir(options.out_dir), spec);
  const MemoryEstimate memory =
      estimate_training_memory(spec.model, task->positions_per_batch(), task->longest_sequence(), spec.train.update_freq,
                               spec.train.eval_batch_size);
  check_fits_in_memory(memory, spec.path);

  std::string out = spec_to_yaml(spec);
  out += "# --dry-run: nothing was trained or written.\n" + dir;
  for (const auto& [split, source] : task->report().data)
    if (!source.empty()) out += "# data " + split + ": " + source + "\n";
  if (!init_from.empty()) out += "# init_from: " + init_from + "\n";
  out += fmt::format("# parameters: about {:.4g}M; training memory at least {:.2f} GiB ({:.2f} GiB weights, "
                     "gradients and AdamW state; {:.2f} GiB activations of one batch)\n",
                     memory.parameters / 1e6, memory.total_bytes() / 1073741824.0, memory.weight_bytes / 1073741824.0,
                     memory.activation_bytes / 1073741824.0);
  if (!options.records_only)  // a smoke test's 3 steps are not the schedule's
    for (const std::string& warning : schedule_warnings(spec.train)) out += "# warning: " + warning + "\n";
  if (!validation_warning.empty()) out += "# warning: " + validation_warning + "\n";
  if (const int cpus = available_cpus(); spec.train.threads > cpus)  // as set_num_threads will say
    out += fmt::format("# warning: {} threads asked for, but this process may run on {} CPU(s): the run uses {} "
                       "(threads beyond the cores only wait for each other)\n",
                       spec.train.threads, cpus, cpus);
  return out;
}

}  // namespace tn
