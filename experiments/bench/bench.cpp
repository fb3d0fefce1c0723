#include "experiments/bench/bench.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

#include "core/runtime/dnnl/matmul.h"
#include "core/error.h"
#include "core/runtime/memory_pool.h"
#include "core/platform/system.h"
#include "experiments/bench/bench_trainer.h"
#include "core/runtime/math/stats.h"

namespace tn {

BenchResult bench_model(const ModelConfig& config, const BenchOptions& options) {
  if (config.vocab_size < 1) throw ConfigError("bench: model.vocab_size is not set; pass --vocab V");
  BenchTrainer trainer(config, bench_train_spec(options.train, options.warmup + options.steps + 1), options.batch,
                       options.seq_len, options.seed);
  const double n = static_cast<double>(trainer.tokens_per_step());
  BenchResult result;
  result.params = trainer.model().params().parameter_count();
  result.flops = model_flops(config, options.batch, options.seq_len);

  Tape tape;
  tape.set_bf16(options.precision == Precision::BF16);
  for (int64_t i = 0; i < options.warmup; ++i) trainer.train_step(tape);
  // One more step with its matrix products recorded, replayed alone below: the step's floor.
  matmul_record_begin();
  trainer.train_step(tape);
  const std::vector<MatmulShape> products = matmul_record_end();
  result.matmul_calls = static_cast<int64_t>(products.size());
  double train_s = 0.0;
  for (int64_t i = 0; i < options.steps; ++i) {
    result.train_step_times.push_back(trainer.train_step(tape));
    train_s += result.train_step_times.back();
  }
  result.last_loss = trainer.last_loss();
  result.train_step_s = train_s / options.steps;
  result.train_step_median_s = median_of(result.train_step_times);
  result.train_tokens_per_s = n * options.steps / train_s;
  result.train_gflops = result.flops.train_step() / result.train_step_s / 1e9;
  spdlog::info("train: {:.3f} s/step (median {:.3f}), {:.0f} tokens/s, {:.1f} model GFLOP/s",
               result.train_step_s, result.train_step_median_s, result.train_tokens_per_s,
               result.train_gflops);

  result.train_peak_rss_mb = peak_rss_mb();
  // The replay's scratch operands come after the training peak is read, so they do not count.
  for (int rep = 0; rep < 3; ++rep) result.matmul_replay_times.push_back(matmul_replay_seconds(products));
  result.matmul_only_s = *std::min_element(result.matmul_replay_times.begin(), result.matmul_replay_times.end());
  result.matmul_only_median_s = median_of(result.matmul_replay_times);
  pool_release_cached();  // training's cached buffers are not inference's

  Tape no_grad;
  no_grad.set_enabled(false);
  no_grad.set_bf16(options.precision == Precision::BF16);
  for (int64_t i = 0; i < options.warmup; ++i) trainer.infer(no_grad);
  double infer_s = 0.0;
  for (int64_t i = 0; i < options.steps; ++i) infer_s += trainer.infer(no_grad);
  result.infer_tokens_per_s = n * options.steps / infer_s;
  result.infer_gflops = result.flops.forward() * options.steps / infer_s / 1e9;
  result.peak_rss_mb = peak_rss_mb();
  spdlog::info("infer: {:.0f} tokens/s; peak RSS {:.0f} MB", result.infer_tokens_per_s, result.peak_rss_mb);
  return result;
}

PeakMatmul measure_peak_matmul(int64_t size, int reps) {
  PeakMatmul peak;
  for (ProbeType type : {ProbeType::F32, ProbeType::BF16}) {
    MatmulProbeResult r = probe_matmul(type, size, size, size, reps);
    if (r.ok)
      spdlog::info("peak matmul {}: {:.1f} GFLOP/s ({}^3, best of {}, median {:.1f}; oneDNN {})",
                   to_string(type), r.gflops, size, r.reps, r.median_gflops, r.impl);
    else
      spdlog::warn("peak matmul {}: {}", to_string(type), r.error);
    (type == ProbeType::F32 ? peak.f32 : peak.bf16) = r;
  }
  return peak;
}

}  // namespace tn
