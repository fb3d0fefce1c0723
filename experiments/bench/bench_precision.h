#pragma once
// `bench --compare-precision`: f32 and bf16 training steps of one model, interleaved step by step,
// so that load from other processes on a shared machine hits both alike and their ratio stays
// meaningful when absolute times drift.
#include <vector>

#include "experiments/bench/bench.h"

namespace tn {

struct PrecisionComparison {
  std::vector<double> f32_step_s, bf16_step_s;  // pair i: f32 step then bf16 step
  double f32_median_s = 0, bf16_median_s = 0;
  double speedup_median = 0;  // median over pairs of f32 / bf16 step time
  double speedup_of_medians = 0;
};

/// Runs max(1, options.warmup) untimed steps of each precision, then options.steps pairs (f32 step, bf16
/// step) on the same model, optimizer and tokens. Throws ConfigError when vocab_size is unset.
PrecisionComparison compare_precisions(const ModelConfig& config, const BenchOptions& options);

}  // namespace tn
