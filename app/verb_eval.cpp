// `transnormer eval RUN_DIR|CONFIG.yaml [--split valid|test]`
// `transnormer eval --checkpoint FILE --data FILE.tokens --seq-len L [--batch N]`
// Prints one JSON object on stdout: the task's metrics ({"split", "loss", "ppl", "tokens"} for
// language modelling; without "split" for --checkpoint). Logs go to stderr.
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <iostream>

#include "app/verbs.h"
#include "core/dnnl/engine.h"
#include "core/error.h"
#include "core/io/json_errors.h"
#include "data/data_root.h"
#include "data/readers/wikitext.h"
#include "experiments/runner/load_run.h"
#include "experiments/spec.h"
#include "experiments/tasks/language_modeling.h"
#include "layers/checkpoint.h"
#include "layers/model_config_json.h"

namespace tn::app {
namespace {
struct EvalArgs {
  std::string target, split = "test", checkpoint, data, data_root;
  bool best = false;
  int64_t seq_len = 0, batch = 16;
  int threads = 0;
};

/// The checkpoint's vocabulary; DataError when it has none.
WordVocab vocab_of(const LoadedCheckpoint& ckpt, const std::string& path) {
  if (ckpt.vocab.empty())
    throw DataError(path + ": the checkpoint holds no \"transnormer.vocab\"; it cannot map words to ids");
  return WordVocab::from_tokens(ckpt.vocab);
}

/// A checkpoint on one .tokens file: a language-modelling task whose test split is that file,
/// encoded with the checkpoint's own vocabulary.
int eval_checkpoint(const EvalArgs& args) {
  if (args.data.empty() || args.seq_len < 1)
    throw ConfigError("eval --checkpoint needs --data FILE.tokens and --seq-len L (>= 1)");
  LoadedCheckpoint ckpt = load_checkpoint(args.checkpoint);
  if (ckpt.model->config().head != HeadKind::LM)
    throw ConfigError(args.checkpoint + ": a model with the " +
                      model_config_to_json(ckpt.model->config())["head"].get<std::string>() +
                      " head; eval --checkpoint scores language models on a .tokens file. Evaluate it through its "
                      "run: `transnormer eval RUN_DIR [--best] [--split valid|test]`, or `transnormer predict RUN_DIR`");
  LmData data{vocab_of(ckpt, args.checkpoint)};
  const std::string file = find_data_file(resolve_data_root(args.data_root), args.data);
  data.test = data.vocab.encode(read_lines(file));
  data.test_file = file;
  const LanguageModelingTask task(std::move(data), args.seq_len, args.batch, 0);
  std::cout << dump_json_text(task.evaluate(*ckpt.model, Task::kTest, args.batch).to_json()) << std::endl;
  return 0;
}

/// A run directory (or the config whose default run directory it is), through its task.
int eval_run(const EvalArgs& args) {
  LoadedRun run = load_run(args.target, resolve_data_root(args.data_root), args.best);
  if (!run.task->has_split(args.split))
    throw ConfigError(run.dir + "/config.yaml: the spec has no labelled " + args.split + " split" +
                      (args.split == "valid" ? "" : "; evaluate another with --split, e.g. --split valid"));
  if (const std::string note = unfinished_note(run); !note.empty()) spdlog::warn("{}", note);
  nlohmann::json out = {{"split", args.split}};
  if (run.checkpoint.step >= 0) out["step"] = run.checkpoint.step;
  run.task->evaluate(*run.checkpoint.model, args.split, run.spec.train.eval_batch_size).write_to(out);
  std::cout << dump_json_text(out) << std::endl;
  return 0;
}
}  // namespace

Action add_eval_verb(CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  CLI::App* sub = app.add_subcommand("eval", "Evaluate a run directory or a checkpoint on a split of its task's data");
  sub->add_option("target", args->target, "run directory, its config.yaml, or the spec it was trained from (then runs/<name>)");
  sub->add_option("--split", args->split, "valid or test")->check(CLI::IsMember({"valid", "test"}));
  sub->add_option("--checkpoint", args->checkpoint, "checkpoint.safetensors to evaluate");
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
