// `transnormer bench CONFIG.yaml [--json] [--batch B --seq-len L --vocab V --steps N --threads T]`
// Prints training tokens/s, inference tokens/s and peak RSS; --json prints one object
// {"train": {"tokens_per_s", "step_s"}, "infer": {"tokens_per_s"}, "peak_rss_mb", ...}.
#include <nlohmann/json.hpp>

#include <iostream>

#include "app/verbs.h"
#include "core/dnnl/engine.h"
#include "core/error.h"
#include "data/data_root.h"
#include "experiments/bench.h"
#include "experiments/lm_data.h"
#include "experiments/spec.h"

namespace tn::app {
namespace {
struct BenchArgs {
  std::string config, data_root;
  std::vector<std::string> overrides;
  bool json = false;
  int64_t batch = 0, seq_len = 0, vocab = 0, steps = 10, warmup = 2;
  int threads = 0;
};
}  // namespace

Action add_bench_verb(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* sub = app.add_subcommand("bench", "Measure training and inference throughput of a model");
  sub->add_option("config", args->config, "experiment spec, or a file with only a model: section")->required();
  sub->add_flag("--json", args->json, "print one JSON object on stdout");
  sub->add_option("--batch", args->batch, "sequences per step (default: the spec's train.batch_size, else 8)");
  sub->add_option("--seq-len", args->seq_len, "tokens per sequence (default: the spec's data.seq_len, else 256)");
  sub->add_option("--vocab", args->vocab, "vocabulary size when the model section has none");
  sub->add_option("--steps", args->steps, "timed steps")->check(CLI::PositiveNumber);
  sub->add_option("--warmup", args->warmup, "untimed steps first")->check(CLI::NonNegativeNumber);
  sub->add_option("--threads", args->threads, "threads (default: all cores)");
  sub->add_option("--set", args->overrides, "override a spec value: key.path=value (repeatable)");
  sub->add_option("--data-root", args->data_root, "dataset root, to size the vocabulary from the spec's data");
  return [args]() {
    set_num_threads(args->threads);
    ModelConfig model = load_model_only(args->config, args->overrides);
    BenchOptions options;
    options.batch = 8;
    options.seq_len = 256;
    // A whole experiment spec also gives batch, seq_len and (through its data) the vocabulary.
    std::optional<ExperimentSpec> spec;
    try {
      spec = load_spec(args->config, args->overrides);
    } catch (const ConfigError&) {
    }
    if (spec) {
      options.batch = spec->train.batch_size;
      options.seq_len = spec->data.seq_len;
    }
    if (args->batch > 0) options.batch = args->batch;
    if (args->seq_len > 0) options.seq_len = args->seq_len;
    if (args->vocab > 0) model.vocab_size = args->vocab;
    if (model.vocab_size == 0 && spec)
      model.vocab_size = load_lm_data(spec->data, resolve_data_root(args->data_root)).vocab.size();
    options.steps = args->steps;
    options.warmup = args->warmup;
    const BenchResult r = bench_model(model, options);
    nlohmann::json out = {
        {"train", {{"tokens_per_s", r.train_tokens_per_s}, {"step_s", r.train_step_s}}},
        {"infer", {{"tokens_per_s", r.infer_tokens_per_s}}},
        {"peak_rss_mb", r.peak_rss_mb},
        {"params", r.params},
        {"batch", options.batch},
        {"seq_len", options.seq_len},
        {"vocab_size", model.vocab_size},
        {"threads", num_threads()},
        {"last_loss", r.last_loss}};
    if (args->json) {
      std::cout << out.dump() << std::endl;
    } else {
      std::cout << "train: " << static_cast<int64_t>(r.train_tokens_per_s) << " tokens/s ("
                << r.train_step_s << " s/step)\ninfer: " << static_cast<int64_t>(r.infer_tokens_per_s)
                << " tokens/s\npeak RSS: " << static_cast<int64_t>(r.peak_rss_mb) << " MB\n"
                << "params: " << r.params << ", batch " << options.batch << " x seq_len "
                << options.seq_len << ", vocab " << model.vocab_size << ", " << num_threads()
                << " threads\n";
    }
    return 0;
  };
}

}  // namespace tn::app
