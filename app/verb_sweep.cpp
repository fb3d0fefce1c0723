// `transnormer sweep SWEEP.yaml|SPEC.yaml [--set key=value ...] [--grid key=v1,v2 ...] [--jobs N]
//                   [--threads-per-job T] [--out DIR] [--dry-run] [--retry-failed] [--data-root DIR]`
// Parses the arguments; experiments/sweeps does the rest (expansion, validation, child runs, sweep.json).
#include <filesystem>
#include <iostream>
#include <thread>

#include "app/config_path.h"
#include "app/verbs.h"
#include "core/error.h"
#include "core/process/stop_signal.h"
#include "data/data_root.h"
#include "experiments/sweeps/sweep_runner.h"
#include "experiments/sweeps/sweep_spec.h"

namespace tn::app {
namespace {
struct SweepArgs {
  std::string file, out, data_root;
  int jobs = 2;  // docs/performance.md "Sweeps": small points gain more side by side than from threads
  int threads_per_job = 0;
  bool dry_run = false, retry_failed = false;
  SweepCommandLine cli;
};
}  // namespace

Action add_sweep_verb(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* sub = app.add_subcommand("sweep", "Run every point of a sweep file (grid, zip, points, seeds) as `train` runs");
  sub->add_option("sweep", args->file,
                  "sweep file (YAML: base, set, grid, zip, points, seeds), or an experiment spec to sweep around "
                  "with --grid and --set")
      ->required();
  sub->add_option("--set", args->cli.set, "a value for every point: key.path=value (repeatable)");
  sub->add_option("--grid", args->cli.grid, "a grid axis: key.path=v1,v2,... (repeatable; first axis slowest)");
  sub->add_option("--jobs", args->jobs, "points run at a time (default 2)")->check(CLI::Range(1, 256));
  sub->add_option("--threads-per-job", args->threads_per_job, "threads of each point (default: cores / jobs)")
      ->check(CLI::Range(1, 1024));
  sub->add_option("--out", args->out, "sweep folder (default runs/<sweep name>)");
  sub->add_option("--data-root", args->data_root, "dataset root (default $TRANSNORMER_DATA, else ./datasets)");
  sub->add_flag("--dry-run", args->dry_run, "list the points, their overrides and folders; run nothing");
  sub->add_flag("--retry-failed", args->retry_failed, "run failed and diverged points again");
  return [args]() {
    const SweepSpec sweep = load_sweep(find_config(args->file), args->cli);  // every point validated before anything runs
    const std::string out = args->out.empty() ? (std::filesystem::path("runs") / sweep.name).string() : args->out;
    if (args->dry_run) {
      std::cout << describe_sweep(sweep, out);
      return 0;
    }
    SweepOptions options;
    options.out_dir = out;
    options.data_root = resolve_data_root(args->data_root);
    options.binary = std::filesystem::read_symlink("/proc/self/exe").string();
    options.jobs = args->jobs;
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    options.threads_per_job = args->threads_per_job > 0 ? args->threads_per_job : std::max(1, cores / args->jobs);
    options.retry_failed = args->retry_failed;
    install_stop_handlers();
    options.stop_requested = stop_signal;
    return run_sweep(sweep, options).exit_code();
  };
}

}  // namespace tn::app
