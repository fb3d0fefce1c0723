// `transnormer sweep SWEEP.yaml|SPEC.yaml [--set key=value ...] [--grid key=v1,v2 ...] [--jobs N]
//                   [--threads-per-job T] [--ranks-per-point R] [--launcher local|slurm]
//                   [--slurm "sbatch options"] [--detach] [--out DIR] [--dry-run] [--retry-failed]
//                   [--data-root DIR] [--smoke]`
// Parses the arguments; experiments/sweeps does the rest (expansion, validation, launches, sweep.json).
#include <spdlog/spdlog.h>

#include <filesystem>
#include <iostream>
#include <thread>

#include "app/config_path.h"
#include "app/smoke.h"
#include "app/verbs.h"
#include "core/platform/comm/communicator.h"
#include "core/error.h"
#include "core/platform/io/dir_lock.h"
#include "core/platform/process/stop_signal.h"
#include "data/data_root.h"
#include "experiments/sweeps/slurm_launcher.h"
#include "experiments/sweeps/sweep_runner.h"
#include "experiments/sweeps/sweep_spec.h"

namespace tn::app {
namespace {
struct SweepArgs {
  std::string file, out, data_root;
  int jobs = 2;  // docs/performance.md "Sweeps": small points gain more side by side than from threads
  int threads_per_job = 0;
  int ranks_per_point = 1;
  std::string launcher = "local", slurm;
  bool dry_run = false, retry_failed = false, detach = false, smoke = false;
  SweepCommandLine cli;
};
/// The launch settings of `args` for a sweep into `out`.
SweepOptions sweep_options(const SweepArgs& args, const std::string& out, bool jobs_given) {
  const bool slurm = args.launcher == "slurm";
  SweepOptions options;
  options.launcher = args.launcher;
  options.ranks_per_point = args.ranks_per_point;
  if (slurm) options.slurm_args = split_sbatch_options(args.slurm);
  options.slurm_max_running = slurm && jobs_given ? args.jobs : 0;
  options.detach = args.detach;
  options.out_dir = out;
  options.data_root = resolve_data_root(args.data_root);
  options.binary = std::filesystem::read_symlink("/proc/self/exe").string();
  options.jobs = args.jobs;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.threads_per_job = args.threads_per_job > 0 ? args.threads_per_job
                            : slurm                    ? 1
                                                       : std::max(1, cores / (args.jobs * args.ranks_per_point));
  options.retry_failed = args.retry_failed;
  return options;
}

/// Whether the value of "key=value" is a comma-separated list as Hydra's multirun writes one
/// (a comma outside brackets: "a,b", not "[a, b]").
bool hydra_list(const std::string& assignment) {
  const std::string value = assignment.substr(assignment.find('=') + 1);
  return value.find(',') != std::string::npos && value.find_first_of("[{\"'") == std::string::npos;
}

/// load_sweep, where a --set written as Hydra writes a multirun axis (`--set key=a,b`) is said to
/// give every point one value, and a value refused for its type gets the --grid that varies it.
SweepSpec load_sweep_with_hints(const std::string& file, const SweepCommandLine& cli) {
  std::vector<std::string> lists;
  for (const std::string& a : cli.set)
    if (a.find('=') != std::string::npos && hydra_list(a)) lists.push_back(a);
  try {
    SweepSpec sweep = load_sweep(file, cli);
    for (const std::string& a : lists)
      spdlog::warn("--set {} gives every point the one value '{}'; to vary it over those values, use --grid {}",
                   a, a.substr(a.find('=') + 1), a);
    return sweep;
  } catch (const ConfigError& e) {
    for (const std::string& a : lists)
      if (std::string(e.what()).find("--set " + a) != std::string::npos)
        throw ConfigError(std::string(e.what()) + " (--set gives every point one value; to vary it over those "
                          "values, use --grid " + a + ")");
    throw;
  }
}

/// `sweep`'s action: checks, loads the sweep, and runs (or lists) it; the exit code.
int run_sweep_verb(SweepArgs& args, bool jobs_given) {
  const bool slurm = args.launcher == "slurm";
  if (!slurm && (!args.slurm.empty() || args.detach))
    throw ConfigError(std::string(args.detach ? "--detach" : "--slurm") + " needs --launcher slurm");
  if (args.ranks_per_point > 1 && !built_with_mpi())
    throw ConfigError("--ranks-per-point " + std::to_string(args.ranks_per_point) +
                      ": this transnormer was built without MPI; install libopenmpi-dev and rebuild (scripts/setup.sh)");
  if (args.smoke && slurm)
    throw ConfigError("--smoke runs its points here, in seconds: leave --launcher slurm out");
  args.cli.smoke = args.smoke;
  std::error_code ec;
  if (std::filesystem::is_fifo(args.file, ec))
    throw ConfigError(args.file + " is a pipe: a sweep reads its file again (for each point, on a rerun, and in its "
                      "report's rerun command); give the file itself");
  const SweepSpec sweep = load_sweep_with_hints(find_config(args.file), args.cli);  // every point validated before anything runs
  if (args.smoke) {  // the points warn in their logs; the sweep says it once here
    std::vector<std::string> sets;
    for (const SpecOverride& o : sweep.set) sets.push_back(o.assignment());
    warn_smoke_overrides(sets);
  }
  std::string out = args.out.empty() ? (std::filesystem::path("runs") / sweep.name).string() : args.out;
  if (args.smoke && args.out.empty() && args.dry_run) out = smoke_folder_pattern(sweep.name);
  if (args.smoke && args.out.empty() && !args.dry_run) {
    out = smoke_folder(sweep.name);
    spdlog::info("smoke test of the sweep {}: every point 3 steps, 2 batches of each evaluation, into {}", sweep.name, out);
  }
  check_folder_path(out, "sweep folder");
  if (args.dry_run && !slurm) {
    std::cout << describe_sweep(sweep, out, args.retry_failed);
    return 0;
  }
  SweepOptions options = sweep_options(args, out, jobs_given);
  if (args.dry_run) {  // slurm: the batch script, as it would be submitted
    const std::string script = slurm_dry_run(sweep, options);
    if (script.empty()) std::cerr << "sweep " << sweep.name << ": no point needs running\n";
    std::cout << script;
    return 0;
  }
  install_stop_handlers();
  options.stop_requested = stop_signal;
  return run_sweep(sweep, options).exit_code();
}

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
  CLI::Option* jobs = sub->add_option("--jobs", args->jobs,
                                      "points run at a time (default 2; on Slurm: the job array's limit, default none)")
                          ->check(CLI::Range(1, 256));
  sub->add_option("--threads-per-job", args->threads_per_job,
                  "threads of each point, or of each of its ranks (default: cores / jobs; on Slurm 1, its --cpus-per-task)")
      ->check(CLI::Range(1, 1024));
  sub->add_option("--ranks-per-point", args->ranks_per_point,
                  "train each point data-parallel on R MPI ranks (mpirun -np R; on Slurm srun --mpi=pmix)")
      ->check(CLI::Range(1, 4096));
  sub->add_option("--launcher", args->launcher, "local: child processes here (default); slurm: one Slurm job array")
      ->check(CLI::IsMember({"local", "slurm"}));
  sub->add_option("--slurm", args->slurm, "sbatch options for the job array, e.g. \"--partition=cpu --time=8:00:00\"");
  sub->add_flag("--detach", args->detach, "with --launcher slurm: submit and return; rerun the command to follow the tasks");
  CLI::Option* out = sub->add_option("--out", args->out, "sweep folder (default runs/<sweep name>)");
  sub->add_option("--data-root", args->data_root, "dataset root (default $TRANSNORMER_DATA, else ./datasets)");
  sub->add_flag("--dry-run", args->dry_run,
                "list the points, their overrides and folders (with --launcher slurm: print the batch script); run nothing");
  sub->add_flag("--retry-failed", args->retry_failed, "run failed and diverged points again");
  sub->add_flag("--smoke", args->smoke,
                "a smoke test of every point (train --smoke: 3 steps, 2 batches of each evaluation), into a new "
                "scratch folder under $TMPDIR (or --out)");
  return [args, jobs, out]() {
    if (out->count() > 0 && args->out.empty())
      throw ConfigError("--out is empty: name the sweep folder, or leave --out out (runs/<sweep name>)");
    return run_sweep_verb(*args, jobs->count() > 0);
  };
}

}  // namespace tn::app
