// `transnormer eval RUN_DIR|CONFIG.yaml [--split valid|test]`
// `transnormer eval --checkpoint FILE --data FILE.tokens --seq-len L [--batch N]`
// Prints one JSON object {"loss", "ppl", "tokens"} on stdout (design.md "CLI").
#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>

#include "app/verbs.h"
#include "core/dnnl/engine.h"
#include "core/error.h"
#include "data/data_root.h"
#include "data/readers/wikitext.h"
#include "data/tokenizers/word_vocab.h"
#include "experiments/evaluate.h"
#include "experiments/lm_data.h"
#include "experiments/spec.h"
#include "layers/checkpoint.h"

namespace tn::app {
namespace {
struct EvalArgs {
  std::string target, split = "test", checkpoint, data, data_root;
  int64_t seq_len = 0, batch = 16;
  int threads = 0;
};

WordVocab vocab_of(const LoadedCheckpoint& ckpt, const std::string& path) {
  if (ckpt.vocab.empty())
    throw DataError(path + ": the checkpoint holds no \"transnormer.vocab\"; it cannot map words to ids");
  return WordVocab::from_tokens(ckpt.vocab);
}

int eval_checkpoint(const EvalArgs& args) {
  if (args.data.empty() || args.seq_len < 1)
    throw ConfigError("eval --checkpoint needs --data FILE.tokens and --seq-len L (>= 1)");
  LoadedCheckpoint ckpt = load_checkpoint(args.checkpoint);
  const WordVocab vocab = vocab_of(ckpt, args.checkpoint);
  const std::vector<int32_t> ids = vocab.encode(read_lines(args.data));
  LmEval r = evaluate_lm(*ckpt.model, ids, args.seq_len, args.batch);
  std::cout << nlohmann::json{{"loss", r.loss}, {"ppl", r.ppl}, {"tokens", r.tokens}}.dump() << std::endl;
  return 0;
}

int eval_run(const EvalArgs& args) {
  std::filesystem::path run_dir = args.target;
  if (std::filesystem::is_regular_file(run_dir)) {  // a config: its default run directory
    run_dir = std::filesystem::path("runs") / load_spec(args.target).name;
  }
  const std::string config = (run_dir / "config.yaml").string();
  const std::string ckpt_path = (run_dir / "checkpoint.safetensors").string();
  if (!std::filesystem::exists(config) || !std::filesystem::exists(ckpt_path))
    throw DataError(run_dir.string() + ": not a run directory (needs config.yaml and "
                    "checkpoint.safetensors); train first or pass --checkpoint");
  ExperimentSpec spec = load_spec(config);
  LoadedCheckpoint ckpt = load_checkpoint(ckpt_path);
  const WordVocab vocab = vocab_of(ckpt, ckpt_path);
  LmData data = load_lm_data(spec.data, resolve_data_root(args.data_root));
  if (data.vocab.tokens() != vocab.tokens())
    throw DataError(ckpt_path + ": its vocabulary differs from the one built from " +
                    data.train_file + "; is --data-root pointing at other data?");
  const std::vector<int32_t>& ids = args.split == "valid" ? data.valid : data.test;
  if (ids.empty())
    throw ConfigError(config + ": the spec has no " + args.split + " split");
  LmEval r = evaluate_lm(*ckpt.model, ids, spec.data.seq_len, spec.train.eval_batch_size);
  std::cout << nlohmann::json{{"split", args.split}, {"loss", r.loss}, {"ppl", r.ppl},
                              {"tokens", r.tokens}}.dump()
            << std::endl;
  return 0;
}
}  // namespace

Action add_eval_verb(CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  CLI::App* sub = app.add_subcommand("eval", "Evaluate a run directory or a checkpoint on LM data");
  sub->add_option("target", args->target, "run directory (or its config.yaml)");
  sub->add_option("--split", args->split, "valid or test")->check(CLI::IsMember({"valid", "test"}));
  sub->add_option("--checkpoint", args->checkpoint, "checkpoint.safetensors to evaluate");
  sub->add_option("--data", args->data, "a .tokens file (with --checkpoint)");
  sub->add_option("--seq-len", args->seq_len, "block length (with --checkpoint)");
  sub->add_option("--batch", args->batch, "blocks per batch (does not change the result)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  sub->add_option("--data-root", args->data_root, "dataset root (default $TRANSNORMER_DATA, else ./data)");
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
