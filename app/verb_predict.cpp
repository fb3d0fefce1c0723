// `transnormer predict RUN_DIR [--split test] [--out DIR]`
// Runs a trained sentence-prediction model over a split, labelled or not, and writes the task's
// submission files (GLUE: <TASK>.tsv with `index` and `prediction`) into DIR (default
// RUN_DIR/submission). Prints {"split", "files": [...]} on stdout; logs go to stderr.
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <iostream>

#include "app/verbs.h"
#include "core/runtime/dnnl/engine.h"
#include "core/platform/io/dir_lock.h"
#include "core/platform/io/json_errors.h"
#include "data/data_root.h"
#include "experiments/runner/load_run.h"

namespace tn::app {
namespace {
struct PredictArgs {
  std::string target, split = "test", out, data_root;
  int64_t batch = 0;
  int threads = 0;
  bool best = false;
};
}  // namespace

Action add_predict_verb(CLI::App& app) {
  auto args = std::make_shared<PredictArgs>();
  CLI::App* sub = app.add_subcommand("predict", "Write a run's predictions on a split as submission files (GLUE)");
  sub->add_option("target", args->target, "run directory, its config.yaml, or the spec it was trained from (then runs/<name>)")->required();
  sub->add_option("--split", args->split,
                  "test (every test file: MNLI's matched and mismatched), valid, or a split's name");
  sub->add_option("--out", args->out, "folder for the files (default RUN_DIR/submission)");
  sub->add_option("--batch", args->batch, "examples per batch (default the run's eval_batch_size)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  sub->add_option("--data-root", args->data_root, "dataset root (default $TRANSNORMER_DATA, else ./datasets)");
  sub->add_flag("--best", args->best, "predict with the run's checkpoint_best.safetensors (train.checkpoint.best_metric)");
  sub->add_option("--threads", args->threads, "threads (default: all cores)")->check(CLI::Range(0, 1024));
  return [args]() {
    if (!args->out.empty()) check_folder_path(args->out, "predictions folder");  // before the predictions
    set_num_threads(args->threads);
    LoadedRun run = load_run(args->target, resolve_data_root(args->data_root), args->best);
    if (const std::string note = unfinished_note(run); !note.empty()) spdlog::warn("{}", note);
    const std::string out = args->out.empty() ? (std::filesystem::path(run.dir) / "submission").string() : args->out;
    const int64_t batch = args->batch > 0 ? args->batch : run.spec.train.eval_batch_size;
    const std::vector<std::string> files = run.task->write_submission(*run.checkpoint.model, args->split, batch, out);
    std::cout << dump_json_text(nlohmann::json{{"split", args->split}, {"files", files}}) << std::endl;
    return 0;
  };
}

}  // namespace tn::app
