// `transnormer bench CONFIG.yaml [--json] [--batch B --seq-len L --vocab V --steps N --threads T]
//                    [--precision f32|bf16] [--compare-precision]
//                    [--seq-lens 512,1024,... [--mixers softmax,diag,...] [--scaling-batch B]]`
// Prints training tokens/s (forward + backward + AdamW), inference tokens/s, peak RSS, model FLOPs
// per step and model-FLOP utilisation against the f32 (and bf16) oneDNN matmul throughput measured
// right there; with --seq-lens, the forward+backward time and peak memory of one token-mixer layer
// per mixer, causal and bidirectional, per n (experiments/bench_scaling.h). --json prints one object
// {"train": {"tokens_per_s", "step_s", "model_gflops", "mfu"}, "infer": {"tokens_per_s", ...},
//  "peak_rss_mb", "model_gflop_per_step", "mfu", "peak_gflops": {"f32", "bf16"},
//  "scaling": [{"mixer", "seq_len", "causal", "fwd_bwd_s", "peak_mb", ...}], ...}.
// docs/performance.md explains every number.
#include <nlohmann/json.hpp>

#include <iostream>
#include <optional>

#include <spdlog/spdlog.h>

#include "app/verbs.h"
#include "core/dnnl/engine.h"
#include "core/error.h"
#include "core/system.h"
#include "data/data_root.h"
#include "experiments/bench.h"
#include "experiments/bench_precision.h"
#include "experiments/bench_scaling.h"
#include "experiments/lm_data.h"
#include "experiments/spec.h"

#include <unistd.h>

#include <climits>

namespace tn::app {
namespace {
struct BenchArgs {
  std::string config, data_root, precision;
  std::vector<std::string> overrides;
  bool json = false;
  int64_t batch = 0, seq_len = 0, vocab = 0, steps = 10, warmup = 2;
  int threads = 0;
  bool skip_model = false;
  bool compare_precision = false;
  int64_t probe_size = 2048;
  int probe_reps = 5;
  std::vector<int64_t> seq_lens;
  std::vector<std::string> mixers;
  int64_t scaling_batch = 1;
  int scaling_reps = 3, scaling_warmup = 1;
  std::string causality = "both";
  double scaling_max_gib = 4.0;
  bool scaling_in_process = false;
  std::string scaling_worker;
};

nlohmann::json nullable(bool ok, double value) { return ok ? nlohmann::json(value) : nlohmann::json(nullptr); }

nlohmann::json probe_json(const MatmulProbeResult& r) {
  nlohmann::json j = {{"m", r.m}, {"n", r.n}, {"k", r.k}, {"impl", r.impl}};
  if (r.ok) {
    j["gflops"] = r.gflops;
    j["median_gflops"] = r.median_gflops;
    j["best_s"] = r.best_s;
    j["reps"] = r.reps;
  } else {
    j["error"] = r.error;
  }
  return j;
}

std::string self_executable() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  buf[n] = '\0';
  return buf;
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * fraction);
  return buf;
}
}  // namespace

Action add_bench_verb(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* sub = app.add_subcommand("bench", "Measure throughput, memory, MFU and scaling in n of a model");
  sub->add_option("config", args->config, "experiment spec, or a file with only a model: section");
  sub->add_flag("--json", args->json, "print one JSON object on stdout");
  sub->add_option("--batch", args->batch, "sequences per step (default: the spec's train.batch_size, else 8)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  sub->add_option("--seq-len", args->seq_len, "tokens per sequence (default: the spec's data.seq_len, else 256)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  sub->add_option("--vocab", args->vocab, "vocabulary size when the model section has none")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  sub->add_option("--steps", args->steps, "timed steps")->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  sub->add_option("--warmup", args->warmup, "untimed steps first")->check(CLI::Range(int64_t{0}, int64_t{1} << 20));
  sub->add_option("--threads", args->threads, "threads (default: all cores)")->check(CLI::Range(0, 1024));
  sub->add_option("--set", args->overrides, "override a spec value: key.path=value (repeatable)");
  sub->add_option("--data-root", args->data_root, "dataset root, to size the vocabulary from the spec's data");
  sub->add_flag("--skip-model", args->skip_model, "skip the whole-model training/inference timing");
  sub->add_flag("--compare-precision", args->compare_precision,
                "also time f32 and bf16 training steps of one model interleaved (--steps pairs) and "
                "report the bf16 speed-up, robust to load that comes and goes");
  sub->add_option("--precision", args->precision,
                  "f32, or bf16 for the dense products (default: the spec's train.precision, else f32)")
      ->check(CLI::IsMember({"f32", "bf16"}));
  sub->add_option("--probe-size", args->probe_size,
                  "size of the square matmul timed for the peak GFLOP/s (0: no probe, no MFU)")
      ->check(CLI::Range(int64_t{0}, int64_t{16384}));
  sub->add_option("--probe-reps", args->probe_reps, "timed reps of the matmul probe")->check(CLI::Range(1, 1000));
  sub->add_option("--seq-lens", args->seq_lens, "sequence lengths of the per-mixer scaling table, e.g. 512,1024")
      ->delimiter(',')
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  sub->add_option("--mixers", args->mixers,
                  "token mixers of the scaling table (default: the model's own, plus softmax)")
      ->delimiter(',');
  sub->add_option("--scaling-batch", args->scaling_batch, "batch of the scaling measurements")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  sub->add_option("--scaling-reps", args->scaling_reps, "timed reps per scaling point (median reported)")
      ->check(CLI::Range(1, 1000));
  sub->add_option("--scaling-warmup", args->scaling_warmup, "untimed reps per scaling point")
      ->check(CLI::Range(0, 1000));
  sub->add_option("--causality", args->causality, "scaling points: both, causal or bidirectional")
      ->check(CLI::IsMember({"both", "causal", "bidirectional"}));
  sub->add_option("--scaling-max-gib", args->scaling_max_gib,
                  "skip softmax points whose n x n buffer exceeds this many GiB")
      ->check(CLI::Range(0.001, 1024.0));
  sub->add_flag("--scaling-in-process", args->scaling_in_process,
                "measure scaling points in this process (peak = tensor high-water mark) instead of "
                "one child process per point (peak = RSS high-water mark)");
  sub->add_option("--scaling-worker", args->scaling_worker, "internal: measure one scaling point")->group("");
  return [args]() {
    if (!args->scaling_worker.empty()) return scaling_worker_main(args->scaling_worker);
    if (args->config.empty())
      throw ConfigError("bench: CONFIG is required: transnormer bench CONFIG.yaml [--json] ...");
    set_num_threads(args->threads);
    BenchOptions options;
    options.batch = 8;
    options.seq_len = 256;
    // A whole experiment spec (validated like `train` does, errors included) also gives batch,
    // seq_len, precision and, through its data, the vocabulary. A model-only file gives the model.
    std::optional<ExperimentSpec> spec;
    ModelConfig model;
    if (is_whole_spec(args->config)) {
      spec = load_spec(args->config, args->overrides);
      model = spec->model;
      options.batch = spec->train.batch_size;
      options.seq_len = spec->data.seq_len;
    } else {
      for (const std::string& set : args->overrides)
        if (set.rfind("model.", 0) != 0)
          throw ConfigError(args->config + ": --set " + set + ": this file holds only a model: "
                            "section, so only model.* keys can be set; use --precision, --batch, "
                            "--seq-len or --vocab for the rest");
      model = load_model_only(args->config, args->overrides);
    }
    if (args->batch > 0) options.batch = args->batch;
    if (args->seq_len > 0) options.seq_len = args->seq_len;
    if (args->vocab > 0) model.vocab_size = args->vocab;
    if (model.vocab_size == 0 && spec && !args->skip_model)
      model.vocab_size = load_lm_data(spec->data, resolve_data_root(args->data_root)).vocab.size();
    options.steps = args->steps;
    options.warmup = args->warmup;
    options.bf16 = (args->precision.empty() && spec ? spec->train.precision : args->precision) == "bf16";

    ScalingOptions scaling;
    scaling.seq_lens = args->seq_lens;
    for (const std::string& name : args->mixers) scaling.mixers.push_back(parse_mixer_kind(name));
    scaling.batch = args->scaling_batch;
    scaling.reps = args->scaling_reps;
    scaling.warmup = args->scaling_warmup;
    scaling.causal = args->causality != "bidirectional";
    scaling.bidirectional = args->causality != "causal";
    scaling.max_quadratic_bytes = args->scaling_max_gib * 1024.0 * 1024.0 * 1024.0;
    scaling.threads = num_threads();
    if (!args->scaling_in_process) scaling.worker_exe = self_executable();

    nlohmann::json out;
    std::optional<BenchResult> r;
    if (!args->skip_model) {
      r = bench_model(model, options);
      out["params"] = r->params;
      out["batch"] = options.batch;
      out["seq_len"] = options.seq_len;
      out["vocab_size"] = model.vocab_size;
      out["last_loss"] = r->last_loss;
      out["precision"] = options.bf16 ? "bf16" : "f32";
    }
    if (args->skip_model && args->compare_precision)
      spdlog::warn("--compare-precision times the model and is ignored with --skip-model");
    if (!args->mixers.empty() && args->seq_lens.empty())
      spdlog::warn("--mixers chooses the mixers of the scaling table and is ignored without --seq-lens");
    if (args->skip_model && args->seq_lens.empty() && args->probe_size == 0)
      throw ConfigError("bench: --skip-model with --probe-size 0 and no --seq-lens measures nothing");
    std::optional<PrecisionComparison> cmp;
    if (args->compare_precision && !args->skip_model) {
      cmp = compare_precisions(model, options);
      out["precision_comparison"] = {{"pairs", options.steps},
                                     {"f32_step_s", cmp->f32_step_s},
                                     {"bf16_step_s", cmp->bf16_step_s},
                                     {"f32_median_s", cmp->f32_median_s},
                                     {"bf16_median_s", cmp->bf16_median_s},
                                     {"speedup_median", cmp->speedup_median},
                                     {"speedup_of_medians", cmp->speedup_of_medians}};
    }
    // Peak RSS of the model runs, before the probe and the scaling points add anything.
    out["peak_rss_mb"] = peak_rss_mb();
    out["threads"] = num_threads();

    PeakMatmul peak;
    if (args->probe_size > 0) peak = measure_peak_matmul(args->probe_size, args->probe_reps);
    out["peak_gflops"] = {{"f32", nullable(peak.f32.ok, peak.f32.gflops)},
                          {"bf16", nullable(peak.bf16.ok, peak.bf16.gflops)}};
    if (args->probe_size > 0)
      out["matmul_probe"] = {{"f32", probe_json(peak.f32)}, {"bf16", probe_json(peak.bf16)}};

    if (r) {
      const ModelFlops& f = r->flops;
      out["train"] = {{"tokens_per_s", r->train_tokens_per_s},
                      {"step_s", r->train_step_s},
                      {"step_median_s", r->train_step_median_s},
                      {"step_times_s", r->train_step_times},
                      {"peak_rss_mb", r->train_peak_rss_mb},
                      {"matmul_only_s", r->matmul_only_s},
                      {"matmul_calls", r->matmul_calls},
                      {"step_over_matmul", r->train_step_s / r->matmul_only_s},
                      {"model_gflops", r->train_gflops},
                      {"mfu", nullable(peak.f32.ok, mfu(r->train_gflops, peak.f32))},
                      {"mfu_bf16", nullable(peak.bf16.ok, mfu(r->train_gflops, peak.bf16))}};
      out["infer"] = {{"tokens_per_s", r->infer_tokens_per_s},
                      {"model_gflops", r->infer_gflops},
                      {"mfu", nullable(peak.f32.ok, mfu(r->infer_gflops, peak.f32))}};
      out["model_gflop_per_step"] = f.train_step() / 1e9;
      out["mfu"] = nullable(peak.f32.ok, mfu(r->train_gflops, peak.f32));
      out["flops"] = {{"forward_gflop", f.forward() / 1e9},
                      {"train_step_gflop", f.train_step() / 1e9},
                      {"projections_gflop", f.projections / 1e9},
                      {"attention_gflop", f.attention / 1e9},
                      {"channel_mixer_gflop", f.channel_mixer / 1e9},
                      {"head_gflop", f.head / 1e9}};
    }

    std::vector<ScalingRow> rows;
    if (!scaling.seq_lens.empty()) {
      rows = run_scaling(model, scaling, [](const ScalingRow& row) {
        if (row.skipped)
          spdlog::info("scaling {} {} n={}: skipped ({})", row.mixer, row.causal ? "causal" : "bidirectional",
                       row.seq_len, row.reason);
        else
          spdlog::info("scaling {} {} n={}: fwd+bwd {:.4f} s, peak {:.1f} MB", row.mixer,
                       row.causal ? "causal" : "bidirectional", row.seq_len, row.fwd_bwd_s, row.peak_mb);
      });
      nlohmann::json measured = nlohmann::json::array(), skipped = nlohmann::json::array();
      for (const ScalingRow& row : rows) (row.skipped ? skipped : measured).push_back(scaling_row_json(row));
      out["scaling"] = measured;
      out["scaling_skipped"] = skipped;
      out["scaling_ratios"] = scaling_ratios_json(rows);
      out["scaling_config"] = {{"d_model", model.d_model}, {"n_heads", model.n_heads},
                               {"batch", scaling.batch}, {"reps", scaling.reps},
                               {"memory", scaling.worker_exe.empty() ? "pool" : "rss"}};
    }

    if (args->json) {
      std::cout << out.dump() << std::endl;
      return 0;
    }
    if (r) {
      const ModelFlops& f = r->flops;
      std::cout << "train: " << static_cast<int64_t>(r->train_tokens_per_s) << " tokens/s ("
                << r->train_step_s << " s/step)\ninfer: " << static_cast<int64_t>(r->infer_tokens_per_s)
                << " tokens/s\npeak RSS: " << static_cast<int64_t>(out["peak_rss_mb"].get<double>()) << " MB\n"
                << "params: " << r->params << ", batch " << options.batch << " x seq_len "
                << options.seq_len << ", vocab " << model.vocab_size << ", " << num_threads()
                << " threads, precision " << (options.bf16 ? "bf16" : "f32") << "\n";
      std::printf("model FLOPs: %.2f GFLOP per training step (3 x forward %.2f: projections %.2f, "
                  "attention %.2f, channel mixer %.2f, head %.2f)\n",
                  f.train_step() / 1e9, f.forward() / 1e9, f.projections / 1e9, f.attention / 1e9,
                  f.channel_mixer / 1e9, f.head / 1e9);
      std::printf("achieved: train %.1f GFLOP/s, infer %.1f GFLOP/s\n", r->train_gflops, r->infer_gflops);
      std::printf("step vs its matrix products alone: %.3f s / %.3f s = %.3f (%lld products)\n",
                  r->train_step_s, r->matmul_only_s, r->train_step_s / r->matmul_only_s,
                  static_cast<long long>(r->matmul_calls));
    } else {
      std::cout << "peak RSS: " << static_cast<int64_t>(out["peak_rss_mb"].get<double>()) << " MB, "
                << num_threads() << " threads\n";
    }
    for (const MatmulProbeResult* p : {&peak.f32, &peak.bf16}) {
      if (args->probe_size <= 0) break;
      const char* name = p == &peak.f32 ? "f32" : "bf16";
      if (p->ok)
        std::printf("peak matmul %s: %.1f GFLOP/s (%lld^3, best of %d; oneDNN %s)\n", name, p->gflops,
                    static_cast<long long>(p->m), p->reps, p->impl.c_str());
      else
        std::printf("peak matmul %s: not measured (%s)\n", name, p->error.c_str());
    }
    if (r && peak.f32.ok)
      std::printf("MFU: train %s of the f32 peak%s, infer %s\n", percent(mfu(r->train_gflops, peak.f32)).c_str(),
                  peak.bf16.ok ? (" (" + percent(mfu(r->train_gflops, peak.bf16)) + " of bf16)").c_str() : "",
                  percent(mfu(r->infer_gflops, peak.f32)).c_str());
    if (cmp)
      std::printf("f32 vs bf16, %lld interleaved pairs: median step %.3f s vs %.3f s; bf16 speed-up "
                  "%.3fx (median of pair ratios), %.3fx (ratio of medians)\n",
                  static_cast<long long>(options.steps), cmp->f32_median_s, cmp->bf16_median_s,
                  cmp->speedup_median, cmp->speedup_of_medians);
    std::fflush(stdout);
    if (!rows.empty()) {
      std::cout << "\nscaling: one token-mixer layer, d_model " << model.d_model << ", " << model.n_heads
                << " heads; forward + backward, median of " << scaling.reps << "; peak MB = "
                << (scaling.worker_exe.empty() ? "tensor high-water mark (in process)"
                                               : "RSS high-water mark of a child process per point")
                << "\n"
                << format_scaling_table(rows);
    }
    return 0;
  };
}

}  // namespace tn::app
