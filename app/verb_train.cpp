// `transnormer train CONFIG.yaml [--set key.path=value ...] [--out DIR] [--data-root DIR] [--threads N]
//                   [--resume | --overwrite] [--dry-run] [--cfg job] [--smoke]`
// `transnormer train --resume RUN_DIR [--set ...]`: continues a run from its own config.yaml.
// Parses the arguments, claims the run directory, sends the log to DIR/train.log as well as
// stderr; the runner (experiments/runner/runner.h) does the rest, for any task.
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "app/command_line.h"
#include "app/config_path.h"
#include "app/smoke.h"
#include "app/verbs.h"
#include "core/error.h"
#include "core/platform/process/stop_signal.h"
#include "data/data_root.h"
#include "experiments/runner/dry_run.h"
#include "experiments/runner/runner.h"
#include "experiments/spec/spec.h"

namespace tn::app {
namespace {

namespace fs = std::filesystem;

struct TrainArgs {
  std::string config, out, data_root;
  std::vector<std::string> overrides;
  int threads = 0;
  bool resume = false, overwrite = false, dry_run = false;
  std::string cfg;  // --cfg job: print the resolved spec only
  bool smoke = false;  // --smoke: app/smoke.h
  std::string command;  // the command line as given, for run.json
  bool out_given = false;  // --out was on the command line (an empty one is refused)
};

/// CONFIG may be a run directory when resuming: its config.yaml is the spec and it is the --out.
void resolve_run_folder(TrainArgs& a) {
  std::error_code ec;
  if (a.resume && !fs::exists(a.config, ec))
    throw ConfigError(a.config + ": no such run folder or spec file to resume; give the folder of a run "
                      "(e.g. runs/quickstart), or its spec file with --out");
  if (a.resume && a.out.empty() && fs::path(a.config).filename() == "config.yaml" && !fs::is_directory(a.config, ec)) {
    // A run's own config.yaml stands for its run folder, as eval and predict take it.
    const fs::path folder = fs::path(a.config).parent_path();
    if (fs::exists((folder.empty() ? fs::path(".") : folder) / "run.json", ec))
      a.config = folder.empty() ? "." : folder.string();
  }
  if (!fs::is_directory(a.config)) return;
  if (!a.resume && !fs::exists(fs::path(a.config) / "config.yaml"))
    throw ConfigError(a.config + " is a folder, not a spec file: give a spec file (YAML), e.g. configs/quickstart.yaml");
  if (!a.resume)
    throw ConfigError(a.config + " is a folder: to continue the run in it, use `transnormer train --resume " + a.config +
                      "`; to start a run, give a spec file (YAML)");
  const std::string spec = (fs::path(a.config) / "config.yaml").string();
  if (!fs::is_regular_file(spec))
    throw ConfigError(a.config + ": no config.yaml, so this folder holds no run to resume; give the run's folder, "
                      "or the spec file with --out");
  if (!a.out.empty() && fs::weakly_canonical(a.out) != fs::weakly_canonical(a.config))
    throw ConfigError("--out " + a.out + " differs from the run folder " + a.config + " given to --resume; leave out --out");
  a.out = a.config;
  a.config = spec;
}

/// Warns for each key that two --set options give: the last one is used, as Hydra does.
void warn_repeated_sets(const std::vector<std::string>& overrides) {
  std::map<std::string, std::string> seen;  // key -> its first assignment
  for (const std::string& o : overrides) {
    const std::string key = o.substr(0, o.find('='));
    if (auto [it, fresh] = seen.emplace(key, o); !fresh && it->second != o)
      spdlog::warn("--set {} and --set {} give {} twice: the last, {}, is used", it->second, o, key, o);
  }
}

constexpr const char* kLogPattern = "[%Y-%m-%d %H:%M:%S] %l %v";

/// Keeps the log lines of the run's start (before its folder may be written) in memory.
std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> hold_early_log() {
  auto ring = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(256);
  ring->set_pattern(kLogPattern);
  spdlog::default_logger()->sinks().push_back(ring);
  return ring;
}

/// Sends the log to DIR/train.log too (appended when resuming, else started anew), beginning with
/// the lines `early` held, unless stderr already goes to that file (a sweep's child, whose stderr
/// the sweep keeps there).
void log_to_run_folder(const std::string& dir, bool resume,
                       const std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt>& early) {
  auto& sinks = spdlog::default_logger()->sinks();
  std::erase(sinks, early);
  const std::string path = (fs::path(dir) / "train.log").string();
  struct stat err {}, file {};
  if (::fstat(2, &err) == 0 && ::stat(path.c_str(), &file) == 0 && err.st_dev == file.st_dev && err.st_ino == file.st_ino)
    return;
  {
    std::ofstream out(path, resume ? std::ios::app : std::ios::trunc);
    for (const std::string& line : early->last_formatted()) out << line;
    if (!out) throw IoError(path + ": cannot write the run's log");
  }
  try {
    auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path, false);
    sink->set_pattern(kLogPattern);
    sinks.push_back(sink);
    // Each line reaches the file as it is logged: `tail -f train.log` follows the run, and a run
    // killed (SIGKILL, the OOM killer) leaves every line it logged.
    spdlog::default_logger()->flush_on(spdlog::level::trace);
  } catch (const spdlog::spdlog_ex& e) {
    throw IoError(path + ": cannot write the run's log (" + e.what() + ")");
  }
}

int run(TrainArgs& a) {
  if (a.out_given && a.out.empty()) throw ConfigError("--out is empty: name the run folder, or leave --out out (runs/<spec name>)");
  if (!a.resume) a.config = find_config(a.config);
  resolve_run_folder(a);
  std::vector<std::string> overrides = a.overrides;
  warn_repeated_sets(a.overrides);
  if (a.smoke) {
    const std::vector<std::string> smoke = smoke_overrides();
    warn_smoke_overrides(a.overrides);  // the smoke test's value wins: said where the user asked for another
    overrides.insert(overrides.end(), smoke.begin(), smoke.end());
  }
  ExperimentSpec spec = load_spec(a.config, overrides);
  std::error_code ec;
  if (fs::is_fifo(a.config, ec)) {  // `train <(cat spec.yaml)`: /dev/fd/63 names no run folder
    spec.name = "pipe";
    if (a.out.empty() && !a.smoke && a.cfg.empty())
      throw ConfigError(a.config + " is a pipe, whose name says nothing of the run: give its folder with --out DIR");
  }
  // Set after the spec is checked, so that no message names a `--set train.threads` never typed.
  if (a.threads > 0) spec.train.threads = a.threads;
  RunOptions options;
  options.out_dir = a.out.empty() ? (fs::path("runs") / spec.name).string() : a.out;
  options.data_root = resolve_data_root(a.data_root);
  options.resume = a.resume;
  options.overwrite = a.overwrite;
  options.records_only = a.smoke;
  options.invocation = {a.command, overrides};
  options.ranks = &world();  // the MPI world under a launcher, else this process alone
  if (!a.cfg.empty()) {  // Hydra's --cfg job: the spec as resolved, before any data or folder is read
    std::cout << spec_to_yaml(spec) << std::flush;
    return 0;
  }
  if (a.dry_run) {
    if (a.smoke && a.out.empty()) options.out_dir = smoke_folder_pattern(spec.name);  // made when it runs
    std::cout << dry_run(spec, options) << std::flush;
    return 0;
  }
  if (a.smoke && a.out.empty()) {
    options.out_dir = smoke_folder(spec.name);
    spdlog::info("smoke test of {}: 3 steps, 2 batches of each evaluation, into {}", a.config, options.out_dir);
  }
  const auto early = hold_early_log();
  options.on_run_dir = [&](const std::string& dir) { log_to_run_folder(dir, a.resume, early); };
  install_stop_handlers();  // SIGTERM/SIGINT: finish the step, save, exit 143/130
  options.stop_requested = stop_signal;
  try {
    run_training(spec, options);
  } catch (...) {
    std::error_code ec;  // a smoke test's own scratch folder, still empty (it failed before its log): not left behind
    if (a.smoke && a.out.empty() && fs::is_empty(options.out_dir, ec)) fs::remove(options.out_dir, ec);
    throw;
  }
  return 0;
}

}  // namespace

Action add_train_verb(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  CLI::App* sub = app.add_subcommand("train", "Train a model from a YAML experiment spec");
  sub->add_option("config", args->config, "experiment spec (YAML), or with --resume a run folder")->required();
  sub->add_option("--set", args->overrides, "override a spec value: key.path=value (repeatable)");
  CLI::Option* out = sub->add_option("--out", args->out, "run directory (default runs/<config name>)");
  sub->add_option("--data-root", args->data_root,
                  "dataset root (default $TRANSNORMER_DATA, else ./datasets)");
  sub->add_option("--threads", args->threads, "threads (default: train.threads, else all cores)")->check(CLI::Range(0, 1024));
  auto* resume = sub->add_flag("--resume", args->resume,
                               "continue the run in the run directory from its last checkpoint (same spec; "
                               "train.max_steps and the schedule's total_steps may be raised); `train --resume "
                               "RUN_DIR` reads RUN_DIR/config.yaml");
  sub->add_flag("--overwrite", args->overwrite,
                "start again in a run directory that holds a run, deleting that run's files")
      ->excludes(resume);
  sub->add_flag("--dry-run", args->dry_run,
                "resolve and check the spec, read the data, print the run's config.yaml with the data files and "
                "memory estimate; train and write nothing");
  sub->add_flag("--smoke", args->smoke,
                "a smoke test (Lightning's fast_dev_run): 3 steps, validation and test at the end on 2 "
                "batches, into a new scratch folder under $TMPDIR (or --out)")
      ->excludes(resume);
  sub->add_option("--cfg", args->cfg,
                  "job: print the resolved spec (every default filled in; vocab_size as the spec gives it, the data "
                  "not read) and exit, whatever the run folder holds (Hydra's --cfg job)")
      ->check(CLI::IsMember({"job"}));
  return [args, out]() {
    args->out_given = out->count() > 0;
    args->command = command_line();
    return run(*args);
  };
}

}  // namespace tn::app
