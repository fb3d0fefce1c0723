// `transnormer eval RUN_DIR|CONFIG.yaml [--split valid|test]`
// `transnormer eval --checkpoint FILE --data FILE.tokens --seq-len L [--batch N]`
// Prints one JSON object on stdout: the task's metrics ({"split", "loss", "ppl", "tokens"} for
// language modelling; without "split" for --checkpoint). Logs go to stderr.
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <iostream>

#include "app/verbs.h"
#include "core/runtime/dnnl/engine.h"
#include "core/error.h"
#include "core/platform/io/json_errors.h"
#include "data/data_root.h"
#include "experiments/runner/load_run.h"
#include "experiments/spec/spec.h"
#include "experiments/tasks/registry.h"
#include "layers/persistence/checkpoint.h"

namespace tn::app {
namespace {

/// Runs `evaluate` (returns the task's Metrics) and logs, after `what` (the split, or the data
/// file of --checkpoint), its time and throughput: the positions
/// `model` forwarded per second, padding included, the figure to set beside `bench`'s inference
/// tokens/s.
template <class F>
Metrics timed_evaluation(const TransNormerModel& model, const std::string& what, F&& evaluate) {
  const int64_t before = model.positions_forwarded();
  const auto start = std::chrono::steady_clock::now();
  Metrics metrics = evaluate();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int64_t positions = model.positions_forwarded() - before;
  spdlog::info("{}: {} positions in {:.1f} s, {:.0f} tokens/s", what, positions, seconds,
               seconds > 0 ? double(positions) / seconds : 0.0);
  return metrics;
}
struct EvalArgs {
  std::string target, split = "test", checkpoint, data, data_root;
  bool best = false;
  int64_t seq_len = 0, batch = 16;
  int threads = 0;
};

/// A checkpoint on one data file, through the task that scores such a checkpoint alone
/// (make_checkpoint_task: a language model on a .tokens file).
int eval_checkpoint(const EvalArgs& args) {
  if (args.data.empty() || args.seq_len < 1)
    throw ConfigError("eval --checkpoint needs --data FILE.tokens and --seq-len L (>= 1)");
  LoadedCheckpoint ckpt = load_checkpoint(checkpoint_file(args.checkpoint));  // a run folder: its checkpoint
  const std::string file = find_data_file(resolve_data_root(args.data_root), args.data);
  const std::unique_ptr<Task> task = make_checkpoint_task(ckpt, args.checkpoint, file, args.seq_len, args.batch);
  const Metrics metrics =
      timed_evaluation(*ckpt.model, file, [&] { return task->evaluate(*ckpt.model, Task::kTest, args.batch); });
  std::cout << dump_json_text(metrics.to_json()) << std::endl;
  return 0;
}

/// A run directory (or the config whose default run directory it is), through its task.
int eval_run(const EvalArgs& args) {
  LoadedRun run = load_run(args.target, resolve_data_root(args.data_root), args.best);
  if (!run.task->has_split(args.split)) {
    const char* other = args.split == Task::kTest ? Task::kValid : Task::kTest;
    throw ConfigError(run.dir + "/config.yaml: the spec has no labelled " + args.split + " split" +
                      (run.task->has_split(other) ? std::string("; evaluate the ") + other + " split: --split " + other
                                                  : std::string("; nor a labelled ") + other +
                                                        " split: give the spec one (data.valid, data.test) and "
                                                        "evaluate its run again"));
  }
  if (const std::string note = unfinished_note(run); !note.empty()) spdlog::warn("{}", note);
  nlohmann::json out = {{"split", args.split}};
  if (run.checkpoint.step >= 0) out["step"] = run.checkpoint.step;
  timed_evaluation(*run.checkpoint.model, args.split, [&] {
    return run.task->evaluate(*run.checkpoint.model, args.split, run.spec.train.eval_batch_size);
  }).write_to(out);
  std::cout << dump_json_text(out) << std::endl;
  return 0;
}
}  // namespace

Action add_eval_verb(CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  CLI::App* sub = app.add_subcommand("eval", "Evaluate a run directory or a checkpoint on a split of its task's data");
  sub->add_option("target", args->target, "run directory, its config.yaml, or the spec it was trained from (then runs/<name>)");
  CLI::Option* split =
      sub->add_option("--split", args->split, "valid or test (of a run; --checkpoint scores its --data file)")
          ->check(CLI::IsMember({"valid", "test"}));
  sub->add_option("--checkpoint", args->checkpoint, "checkpoint.safetensors to evaluate, or a run folder (its checkpoint)")
      ->excludes(split);
  sub->add_option("--data", args->data, "a .tokens file (with --checkpoint; relative: from the current folder, else the data root)");
  sub->add_flag("--best", args->best, "evaluate the run's checkpoint_best.safetensors (train.checkpoint.best_metric)");
  sub->add_option("--seq-len", args->seq_len, "block length (with --checkpoint)");
  sub->add_option("--batch", args->batch, "blocks per batch (does not change the result)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  sub->add_option("--data-root", args->data_root, "dataset root (default $TRANSNORMER_DATA, else ./datasets)");
  sub->add_option("--threads", args->threads, "threads (default: all cores)")->check(CLI::Range(0, 1024));
  return [args]() {
    set_num_threads(args->threads);
    if (!args->checkpoint.empty()) return eval_checkpoint(*args);
    if (args->target.empty())
      throw ConfigError("eval needs a RUN_DIR, or --checkpoint FILE --data FILE.tokens --seq-len L");
    return eval_run(*args);
  };
}

}  // namespace tn::app
