#pragma once
// Typed run outputs, part 3: what `transnormer bench` measured (docs/performance.md explains
// every number). One to_json/from_json pair for `--json`, and the readable text without it.
// JSON: {"params", "batch", "seq_len", "vocab_size", "last_loss", "precision",
//        "train": {"tokens_per_s", "step_s", "step_median_s", "step_times_s", "peak_rss_mb",
//                  "matmul_only_s", "matmul_calls", "step_over_matmul" (mean step / best replay),
//                  "matmul_only_median_s", "matmul_replay_times_s", "step_over_matmul_median"
//                  (median step / median replay: the same statistic on both sides), "model_gflops",
//                  "mfu", "mfu_bf16" (null unless the bf16 peak is the higher one)},
//        "infer": {"tokens_per_s", "model_gflops", "mfu"}, "model_gflop_per_step", "mfu", "flops": {...},
//        "precision_comparison": {...}, "peak_rss_mb", "threads", "kernel_isa",
//        "cpu": {"model", "avx2", "avx512f", "avx512_bf16", "amx_bf16", "onednn_isa", "bf16_matmul_native"},
//        "peak_gflops": {"f32", "bf16"},
//        "matmul_probe": {"f32": {...}, "bf16": {...}}, "scaling": [...], "scaling_skipped": [...],
//        "scaling_ratios": [...], "scaling_config": {...}}
// (model keys absent with --skip-model; probe, comparison and scaling keys when they ran).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/runtime/precision.h"
#include "experiments/bench/bench.h"
#include "experiments/bench/bench_precision.h"
#include "experiments/bench/bench_scaling.h"

namespace tn {

struct BenchReport {
  /// The whole-model timing and the shapes it ran at (absent with --skip-model).
  struct ModelRun {
    BenchResult result;
    int64_t batch = 0, seq_len = 0, vocab_size = 0;
    Precision precision = Precision::F32;
  };
  struct ScalingSetup {
    int64_t d_model = 0, n_heads = 0, batch = 1;
    int reps = 0;
    std::string memory;  // "rss" (a child process per point) or "pool" (in process)
  };

  std::optional<ModelRun> model;
  std::optional<PrecisionComparison> precision_comparison;
  double peak_rss_mb = 0;  // of the model runs, before the probe and the scaling points
  int threads = 0;
  std::optional<PeakMatmul> peak;  // when the matmul probe ran
  std::vector<ScalingRow> scaling;  // measured and skipped points, in order
  std::optional<ScalingSetup> scaling_setup;

  nlohmann::json to_json() const;
  /// Reads what to_json wrote. Throws std::invalid_argument / nlohmann::json::exception naming
  /// the key for a malformed object.
  static BenchReport from_json(const nlohmann::json& object);
  /// The readable report (stdout without --json).
  std::string to_text() const;
};

}  // namespace tn
