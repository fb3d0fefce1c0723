// `transnormer train CONFIG.yaml [--set key.path=value ...] [--out DIR] [--data-root DIR] [--threads N] [--resume]`
// Parses the arguments; the runner (experiments/runner/runner.h) does the rest, for any task.
#include <nlohmann/json.hpp>

#include <filesystem>

#include "app/verbs.h"
#include "core/process/stop_signal.h"
#include "data/data_root.h"
#include "experiments/spec.h"
#include "experiments/runner/runner.h"

namespace tn::app {
namespace {
struct TrainArgs {
  std::string config, out, data_root;
  std::vector<std::string> overrides;
  int threads = 0;
  bool resume = false;
};
}  // namespace

Action add_train_verb(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  CLI::App* sub = app.add_subcommand("train", "Train a model from a YAML experiment spec");
  sub->add_option("config", args->config, "experiment spec (YAML)")->required();
  sub->add_option("--set", args->overrides, "override a spec value: key.path=value (repeatable)");
  sub->add_option("--out", args->out, "run directory (default runs/<config name>)");
  sub->add_option("--data-root", args->data_root,
                  "dataset root (default $TRANSNORMER_DATA, else ./data)");
  sub->add_option("--threads", args->threads, "threads (default: train.threads, else all cores)")->check(CLI::Range(0, 1024));
  sub->add_flag("--resume", args->resume,
                "continue the run in the run directory from its last checkpoint (same spec; "
                "train.max_steps may be raised)");
  return [args]() {
    std::vector<std::string> overrides = args->overrides;
    if (args->threads > 0) overrides.push_back("train.threads=" + std::to_string(args->threads));
    ExperimentSpec spec = load_spec(args->config, overrides);
    RunOptions options;
    options.out_dir = args->out.empty() ? (std::filesystem::path("runs") / spec.name).string() : args->out;
    options.data_root = resolve_data_root(args->data_root);
    options.resume = args->resume;
    install_stop_handlers();  // SIGTERM/SIGINT: finish the step, save, exit 143/130
    options.stop_requested = stop_signal;
    run_training(spec, options);
    return 0;
  };
}

}  // namespace tn::app
