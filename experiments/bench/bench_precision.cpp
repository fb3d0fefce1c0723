#include "experiments/bench/bench_precision.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/error.h"
#include "experiments/bench/bench_trainer.h"
#include "core/runtime/math/stats.h"

namespace tn {

PrecisionComparison compare_precisions(const ModelConfig& config, const BenchOptions& options) {
  if (config.vocab_size < 1) throw ConfigError("bench: model.vocab_size is not set; pass --vocab V");
  BenchTrainer trainer(config, bench_train_spec(options.train, 2 * (std::max<int64_t>(1, options.warmup) + options.steps)),
                       options.batch, options.seq_len, options.seed);
  Tape f32, bf16;
  bf16.set_bf16(true);
  // At least one untimed pair: a first step of each precision creates its oneDNN primitives.
  for (int64_t i = 0; i < std::max<int64_t>(1, options.warmup); ++i) {
    trainer.train_step(f32);
    trainer.train_step(bf16);
  }
  PrecisionComparison c;
  std::vector<double> ratios;
  for (int64_t i = 0; i < options.steps; ++i) {
    c.f32_step_s.push_back(trainer.train_step(f32));
    c.bf16_step_s.push_back(trainer.train_step(bf16));
    ratios.push_back(c.f32_step_s.back() / c.bf16_step_s.back());
    spdlog::info("pair {}/{}: f32 {:.3f} s, bf16 {:.3f} s, f32/bf16 {:.3f}", i + 1, options.steps,
                 c.f32_step_s.back(), c.bf16_step_s.back(), ratios.back());
  }
  c.f32_median_s = median_of(c.f32_step_s);
  c.bf16_median_s = median_of(c.bf16_step_s);
  c.speedup_median = median_of(ratios);
  c.speedup_of_medians = c.bf16_median_s > 0 ? c.f32_median_s / c.bf16_median_s : 0.0;
  return c;
}

}  // namespace tn
