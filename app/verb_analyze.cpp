// `transnormer analyze locality --checkpoint F --data FILE --seq-len N [--samples K] [--r-step 0.05] [--out DIR]`
// Parses the arguments; experiments/analysis/locality does the work (paper §3.2, Fig. 2).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>

#include "app/verbs.h"
#include "core/runtime/dnnl/engine.h"
#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "core/platform/io/dir_lock.h"
#include "data/data_root.h"
#include "data/readers/wikitext.h"
#include "data/tokenizers/word_vocab.h"
#include "experiments/analysis/locality.h"
#include "experiments/analysis/locality_plot.h"
#include "layers/persistence/checkpoint.h"

namespace tn::app {
namespace {
struct LocalityArgs {
  std::string checkpoint, data, out = ".", data_root;
  int64_t seq_len = 512, samples = 8;
  double r_step = 0.05;
  int threads = 0;
};

/// The arguments checked before the checkpoint is read: r from one token, 1/N, up (a finer step
/// adds no neighbourhood, only points; the default 0.05 stays allowed below N = 20), and an output
/// folder that can be made.
void check_locality_args(const LocalityArgs& args) {
  const double finest = std::min(1.0 / static_cast<double>(args.seq_len), 0.05);
  if (!(args.r_step >= finest && args.r_step <= 1.0))
    throw ConfigError("--r-step " + std::to_string(args.r_step) + " is outside [" + std::to_string(finest) +
                      ", 1] for --seq-len " + std::to_string(args.seq_len) + ": a neighbourhood is a whole number "
                      "of tokens, so give a step from " + std::to_string(finest) + " up to 1 (default 0.05)");
  check_folder_path(args.out, "locality folder");
}

int run_locality(const LocalityArgs& args) {
  check_locality_args(args);
  set_num_threads(args.threads);
  const std::string path = checkpoint_file(args.checkpoint);
  LoadedCheckpoint ckpt = load_checkpoint(path);
  if (ckpt.model->config().arch != Arch::Decoder || ckpt.model->config().head != HeadKind::LM)
    throw ConfigError(path + " holds an encoder (arch: encoder, a masked LM or classifier): analyze locality reads "
                      "a decoder LM's attention over running text (arch: decoder, head: lm), such as runs/quickstart");
  if (ckpt.vocab.empty())
    throw DataError(args.checkpoint + ": the checkpoint holds no \"transnormer.vocab\"; it cannot map words to ids");
  const WordVocab vocab = WordVocab::from_tokens(ckpt.vocab);
  const std::vector<int32_t> stream = vocab.encode(read_lines(find_data_file(resolve_data_root(args.data_root), args.data)));
  const LocalityCurves curves = analyze_locality(*ckpt.model, stream, args.seq_len, args.samples, args.r_step);
  std::filesystem::create_directories(args.out);
  const std::string json_path = (std::filesystem::path(args.out) / "locality.json").string();
  write_file_atomic(json_path, curves.to_json().dump(2) + "\n");
  const std::string svg_path = (std::filesystem::path(args.out) / "locality.svg").string();
  write_locality_svg(curves, args.checkpoint, svg_path);
  spdlog::info("locality of {} layers over {} tokens per sample: {} and {}", curves.layers.size(), args.seq_len,
               json_path, svg_path);
  return 0;
}
}  // namespace

Action add_analyze_verb(CLI::App& app) {
  auto args = std::make_shared<LocalityArgs>();
  CLI::App* sub = app.add_subcommand("analyze", "Analyses of trained models (locality)");
  sub->require_subcommand(1, 1);
  CLI::App* loc = sub->add_subcommand("locality", "Locality accumulation l(r) per layer (paper §3.2, Fig. 2)");
  loc->add_option("--checkpoint", args->checkpoint, "checkpoint.safetensors of an LM run, or the run's folder")->required();
  loc->add_option("--data", args->data, "a .tokens file to take the samples from (relative: from the current folder, else the data root)")->required();
  loc->add_option("--data-root", args->data_root, "dataset root (default $TRANSNORMER_DATA, else ./datasets)");
  loc->add_option("--seq-len", args->seq_len, "tokens per sample, N (default 512)")->check(CLI::Range(int64_t{2}, int64_t{1} << 16));
  loc->add_option("--samples", args->samples, "samples, K (default 8)")->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  loc->add_option("--r-step", args->r_step,
                  "step of the neighbourhood fraction r, from 1/seq-len (or 0.05) to 1 (default 0.05)");
  loc->add_option("--out", args->out, "folder for locality.json and locality.svg (default .)");
  loc->add_option("--threads", args->threads, "threads (default: all cores)")->check(CLI::Range(0, 1024));
  return [args, loc]() {
    if (loc->parsed()) return run_locality(*args);
    return 2;
  };
}

}  // namespace tn::app
