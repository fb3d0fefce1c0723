#pragma once
// Throughput measurement (`transnormer bench`): training steps (forward + backward + AdamW, train
// mode, dropout on) and inference forwards on random tokens, like the reference's train-bench.
#include <cstdint>
#include <optional>
#include <vector>

#include "core/runtime/dnnl/matmul_probe.h"
#include "experiments/bench/bench_flops.h"
#include "core/runtime/precision.h"
#include "experiments/spec/spec.h"
#include "layers/config/model_config.h"

namespace tn {

struct BenchOptions {
  int64_t batch = 8, seq_len = 256;
  int64_t steps = 10;   // timed training steps (and timed inference forwards)
  int64_t warmup = 2;   // untimed steps first (primitive creation, pool warm-up)
  uint64_t seed = 0;
  Precision precision = Precision::F32;  // of the dense products in training and inference
  /// Optimizer, schedule, clipping of the timed steps; null: bench_train_spec's defaults.
  std::optional<TrainSpec> train;
};

struct BenchResult {
  double train_tokens_per_s = 0, train_step_s = 0;  // over all timed steps (mean step)
  double train_step_median_s = 0;                   // robust to bursts of load on a shared machine
  std::vector<double> train_step_times;             // each timed step, seconds
  double infer_tokens_per_s = 0;
  double peak_rss_mb = 0;
  double train_peak_rss_mb = 0;  // peak RSS when the training steps ended (before inference)
  double matmul_only_s = 0;      // one training step's matrix products replayed alone (best of 3)
  std::vector<double> matmul_replay_times;  // each of the 3 replays, seconds
  double matmul_only_median_s = 0;          // their median, set against train_step_median_s
  int64_t matmul_calls = 0;      // matrix products in one training step
  int64_t params = 0;
  double last_loss = 0;
  ModelFlops flops;              // forward FLOPs of one step (bench_flops.h)
  double train_gflops = 0;       // achieved model FLOP/s of training: flops.train_step() / step_s
  double infer_gflops = 0;       // achieved model FLOP/s of inference: flops.forward() / forward_s

  /// What a step costs beyond its products: the mean step over the best replay.
  double step_over_matmul() const { return train_step_s / matmul_only_s; }
  /// The same with one statistic on both sides: the median step over the median replay.
  double step_over_matmul_median() const { return train_step_median_s / matmul_only_median_s; }
};

/// The machine's matmul throughput, measured on the spot (core/runtime/dnnl/matmul_probe.h): one
/// size × size × size matmul in f32 and in bf16 (bf16 inputs, f32 output).
struct PeakMatmul {
  MatmulProbeResult f32, bf16;
};
PeakMatmul measure_peak_matmul(int64_t size = 2048, int reps = 5);

/// Model-FLOP utilisation: achieved model GFLOP/s over the probe's peak (0 when it did not run).
inline double mfu(double achieved_gflops, const MatmulProbeResult& peak) {
  return peak.ok && peak.gflops > 0 ? achieved_gflops / peak.gflops : 0.0;
}

/// Builds the model of `config` (vocab_size must be set) and times it. Logs progress to spdlog.
BenchResult bench_model(const ModelConfig& config, const BenchOptions& options);

}  // namespace tn
