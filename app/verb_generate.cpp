// `transnormer generate --checkpoint FILE [--prompt TEXT] [--max-new-tokens N] [--temperature T]
//                       [--top-k K] [--seed S] [--json] [--threads N (default 1)]`
// Continues a prompt with a decoder LM, one token at a time through the model's incremental
// decoding (layers/generation/generate.h). Words come from the checkpoint's vocabulary: the prompt
// is split on ASCII whitespace, unknown words become <unk>, an empty prompt starts from <eos>.
// Prints the new words joined by spaces (<eos> as a newline) on stdout, or with --json one object
// {"prompt_ids", "ids", "text", "ms_per_token", "tokens_per_s"}; timings go to stderr.
#include <spdlog/fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/verbs.h"
#include "core/runtime/dnnl/engine.h"
#include "core/error.h"
#include "data/text/utf8.h"
#include "data/tokenizers/word_vocab.h"
#include "layers/persistence/checkpoint.h"
#include "layers/generation/generate.h"

namespace tn::app {
namespace {
struct GenerateArgs {
  std::string checkpoint, prompt;
  int64_t max_new_tokens = 20;
  double temperature = 1.0;
  int64_t top_k = 0;
  uint64_t seed = 0;
  bool json = false;
  int threads = 1;  // one row per step: too little work per op to split (measured: 1 beats 2)
};

/// The prompt's ids: ASCII-whitespace separated words (unknown → <unk>); {<eos>} when empty.
std::vector<int32_t> prompt_ids(const WordVocab& vocab, const std::string& prompt) {
  std::vector<int32_t> ids;
  const char* space = " \t\n\r\f\v";
  size_t start = prompt.find_first_not_of(space);
  while (start != std::string::npos) {
    const size_t end = prompt.find_first_of(space, start);
    ids.push_back(vocab.id(std::string_view(prompt).substr(start, end - start)));
    start = end == std::string::npos ? end : prompt.find_first_not_of(space, end);
  }
  if (ids.empty()) ids.push_back(WordVocab::kEos);
  return ids;
}

/// Appends one token to running text: words separated by spaces, <eos> as a line break.
void append_word(const WordVocab& vocab, int32_t id, std::string& text) {
  if (id == WordVocab::kEos) {
    text += '\n';
    return;
  }
  if (!text.empty() && text.back() != '\n') text += ' ';
  text += vocab.tokens().at(static_cast<size_t>(id));
}

int run_generate(const GenerateArgs& args) {
  check_max_new_tokens(args.max_new_tokens);  // before the checkpoint is read
  if (const size_t bad = invalid_utf8_at(args.prompt); bad != std::string::npos)  // as tokenize
    throw ConfigError("--prompt: byte " + std::to_string(bad) + " is not UTF-8; give the prompt as UTF-8 text");
  GenerationOptions options;
  options.max_new_tokens = args.max_new_tokens;
  options.sampling = {args.temperature, args.top_k};
  options.seed = args.seed;
  validate(options.sampling);
  set_num_threads(args.threads);

  const std::string path = checkpoint_file(args.checkpoint);  // a run directory stands for its checkpoint
  LoadedCheckpoint ckpt = load_checkpoint(path);
  if (ckpt.model->config().arch != Arch::Decoder || ckpt.model->config().head != HeadKind::LM)
    throw ConfigError(path + " holds an encoder (arch: encoder, a masked LM or classifier): generate continues text "
                      "with a decoder LM (arch: decoder, head: lm), such as the quickstart's runs/quickstart");
  if (ckpt.vocab.empty())
    throw DataError(args.checkpoint + ": the checkpoint holds no \"transnormer.vocab\", so words "
                    "cannot be mapped to ids; use a checkpoint written by `transnormer train` on "
                    "language-model data");
  const WordVocab vocab = WordVocab::from_tokens(ckpt.vocab);  // its size is the model's (load_checkpoint)
  if (const std::vector<std::string> mixers = ckpt.model->prefix_recomputing_mixers(); !mixers.empty())
    spdlog::warn("{} layers have no incremental form: each new token recomputes the whole prefix, "
                 "so time per token grows", fmt::join(mixers, ", "));

  const std::vector<int32_t> prompt = prompt_ids(vocab, args.prompt);
  std::string text;
  const auto stream = [&](int32_t id) {
    if (args.json) return;
    const size_t before = text.size();
    append_word(vocab, id, text);
    std::cout << text.substr(before) << std::flush;
  };
  const GenerationResult result = generate(*ckpt.model, prompt, options, stream);
  if (args.json) {
    for (int32_t id : result.ids) append_word(vocab, id, text);
    std::cout << nlohmann::json{{"prompt_ids", prompt},
                                {"ids", result.ids},
                                {"text", text},
                                {"ms_per_token", result.ms_per_token()},
                                {"tokens_per_s", result.tokens_per_s()}}
                     .dump()
              << std::endl;
  } else if (text.empty() || text.back() != '\n') {
    std::cout << std::endl;
  }
  spdlog::info("prompt: {} tokens in {:.1f} ms ({:.3f} ms/token)", prompt.size(),
               1000.0 * result.prompt_s,
               1000.0 * result.prompt_s / static_cast<double>(prompt.size()));
  spdlog::info("generated {} tokens in {:.1f} ms: {:.1f} tokens/s, {:.3f} ms/token",
               result.ids.size(), 1000.0 * result.generate_s, result.tokens_per_s(),
               result.ms_per_token());
  return 0;
}
}  // namespace

Action add_generate_verb(CLI::App& app) {
  auto args = std::make_shared<GenerateArgs>();
  CLI::App* sub = app.add_subcommand(
      "generate",
      "Continue a prompt with a decoder LM checkpoint, token by token (NormAttention and linear "
      "layers keep a d_head x d_head state per head, DiagAttention a cache of one block, softmax a "
      "KV cache; cosFormer recomputes its whole prefix each step)");
  sub->add_option("--checkpoint", args->checkpoint, "checkpoint.safetensors with a vocabulary, or its run directory")
      ->required();
  sub->add_option("--prompt", args->prompt,
                  "text to continue: whitespace-separated words, unknown ones become <unk> "
                  "(default: empty, start from <eos>)");
  sub->add_option("--max-new-tokens", args->max_new_tokens, "tokens to generate (0 to 1048576)")
      ->capture_default_str();
  sub->add_option("--temperature", args->temperature, "sampling temperature (>= 0; 0 = greedy)")
      ->capture_default_str();
  sub->add_option("--top-k", args->top_k, "sample among the k most likely tokens (0 = all)")
      ->capture_default_str();
  sub->add_option("--seed", args->seed, "seed of the sampler (0 .. 2^64-1)")
      ->capture_default_str()
      ->check(seed_check());
  sub->add_flag("--json", args->json,
                "print {\"prompt_ids\", \"ids\", \"text\", \"ms_per_token\", \"tokens_per_s\"}");
  sub->add_option("--threads", args->threads,
                  "threads (default 1: one token at a time is too little work per op to split; "
                  "0 = all cores)")
      ->check(CLI::Range(0, 1024));
  return [args]() { return run_generate(*args); };
}

}  // namespace tn::app
