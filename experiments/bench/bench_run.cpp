#include "experiments/bench/bench_run.h"

#include <spdlog/spdlog.h>

#include <optional>

#include "core/runtime/dnnl/engine.h"
#include "core/error.h"
#include "core/platform/system.h"
#include "data/data_root.h"
#include "experiments/runner/memory_check.h"
#include "experiments/spec/spec.h"
#include "experiments/tasks/registry.h"

namespace tn {

namespace {

/// The model and timing options the request and its spec give.
struct BenchSetup {
  ModelConfig model;
  BenchOptions options;
};

BenchSetup resolve_setup(const BenchRequest& req) {
  BenchSetup s;
  s.options.batch = 8;
  s.options.seq_len = 256;
  // A whole experiment spec (validated like `train` does, errors included) also gives batch,
  // seq_len, precision, the training settings and, through its task's data, the vocabulary. A
  // model-only file gives the model.
  std::optional<ExperimentSpec> spec;
  if (is_whole_spec(req.config)) {
    spec = load_spec(req.config, req.overrides);
    s.model = spec->model;
    s.options.batch = spec->train.batch_size;
    s.options.seq_len = spec->data->tokens_per_sample();
    s.options.train = spec->train;
    s.options.precision = spec->train.precision;
  } else {
    for (const std::string& set : req.overrides)
      if (set.rfind("model.", 0) != 0)
        throw ConfigError(req.config + ": --set " + set +
                          ": this file holds only a model: section, so only model.* keys can be set; use "
                          "--precision, --batch, --seq-len or --vocab for the rest");
    s.model = load_model_only(req.config, req.overrides);
  }
  if (req.batch > 0) s.options.batch = req.batch;
  if (req.seq_len > 0) s.options.seq_len = req.seq_len;
  if (req.vocab > 0) s.model.vocab_size = req.vocab;
  if (s.model.vocab_size == 0 && spec && !req.skip_model) {
    try {  // the data only sizes the vocabulary here
      make_task(*spec, resolve_data_root(req.data_root))->configure_model(s.model, false, spec->path);
    } catch (const DataError& e) {
      throw DataError(std::string(e.what()) + ". bench reads the data only for the vocabulary size: give it with "
                      "--vocab V to bench without the data");
    }
  }
  if (s.model.vocab_size < 1 && !req.skip_model)
    throw ConfigError(req.config + ": model.vocab_size is not set" +
                      (spec ? std::string() : " (a file with only a model: section has no data to size it)") +
                      "; add vocab_size under model: or pass --vocab V");
  s.options.steps = req.steps;
  s.options.warmup = req.warmup;
  if (req.precision) s.options.precision = *req.precision;
  return s;
}

ScalingOptions scaling_options(const BenchRequest& req) {
  ScalingOptions scaling;
  scaling.seq_lens = req.seq_lens;
  for (const std::string& name : req.mixers) scaling.mixers.push_back(parse_mixer_kind(name));
  scaling.batch = req.scaling_batch;
  scaling.reps = req.scaling_reps;
  scaling.warmup = req.scaling_warmup;
  scaling.causal = req.causality != Causality::Bidirectional;
  scaling.bidirectional = req.causality != Causality::Causal;
  scaling.max_quadratic_bytes = req.scaling_max_gib * 1024.0 * 1024.0 * 1024.0;
  scaling.threads = num_threads();
  scaling.worker_exe = req.worker_exe;
  return scaling;
}

void log_scaling_row(const ScalingRow& row) {
  const char* causality = row.causal ? "causal" : "bidirectional";
  if (row.skipped)
    spdlog::info("scaling {} {} n={}: skipped ({})", row.mixer, causality, row.seq_len, row.reason);
  else
    spdlog::info("scaling {} {} n={}: fwd+bwd {:.4f} s, peak {:.1f} MB", row.mixer, causality, row.seq_len,
                 row.fwd_bwd_s, row.peak_mb);
}

}  // namespace

BenchReport run_bench(const BenchRequest& req) {
  if (req.config.empty()) throw ConfigError("bench: CONFIG is required: transnormer bench CONFIG.yaml [--json] ...");
  const BenchSetup setup = resolve_setup(req);
  const ScalingOptions scaling = scaling_options(req);
  if (req.skip_model && req.compare_precision)
    spdlog::warn("--compare-precision times the model and is ignored with --skip-model");
  if (!req.mixers.empty() && req.seq_lens.empty())
    spdlog::warn("--mixers chooses the mixers of the scaling table and is ignored without --seq-lens");
  if (req.skip_model && req.seq_lens.empty() && req.probe_size == 0)
    throw ConfigError("bench: --skip-model with --probe-size 0 and no --seq-lens measures nothing");

  BenchReport report;
  if (!req.skip_model) {
    check_fits_in_memory(estimate_training_memory(setup.model, setup.options.batch * setup.options.seq_len,
                                                  setup.options.seq_len),
                         req.config, "lower --batch or --seq-len, or the model's size (model.d_model, "
                                     "model.n_layers, the vocabulary)");
    report.model = BenchReport::ModelRun{bench_model(setup.model, setup.options), setup.options.batch,
                                         setup.options.seq_len, setup.model.vocab_size, setup.options.precision};
    if (req.compare_precision) report.precision_comparison = compare_precisions(setup.model, setup.options);
  }
  // Peak RSS of the model runs, before the probe and the scaling points add anything.
  report.peak_rss_mb = peak_rss_mb();
  report.threads = num_threads();
  if (req.probe_size > 0) report.peak = measure_peak_matmul(req.probe_size, req.probe_reps);
  if (!scaling.seq_lens.empty()) {
    report.scaling = run_scaling(setup.model, scaling, log_scaling_row);
    report.scaling_setup = BenchReport::ScalingSetup{setup.model.d_model, setup.model.n_heads, scaling.batch,
                                                     scaling.reps, scaling.worker_exe.empty() ? "pool" : "rss"};
  }
  return report;
}

}  // namespace tn
