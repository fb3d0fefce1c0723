#pragma once
// Throughput measurement (`transnormer bench`): training steps (forward + backward + AdamW, train
// mode, dropout on) and inference forwards on random tokens, like the reference's train-bench.
#include <cstdint>

#include "layers/model_config.h"

namespace tn {

struct BenchOptions {
  int64_t batch = 8, seq_len = 256;
  int64_t steps = 10;   // timed training steps (and timed inference forwards)
  int64_t warmup = 2;   // untimed steps first (primitive creation, pool warm-up)
  uint64_t seed = 0;
};

struct BenchResult {
  double train_tokens_per_s = 0, train_step_s = 0;
  double infer_tokens_per_s = 0;
  double peak_rss_mb = 0;
  int64_t params = 0;
  double last_loss = 0;
};

/// Builds the model of `config` (vocab_size must be set) and times it. Logs progress to spdlog.
BenchResult bench_model(const ModelConfig& config, const BenchOptions& options);

}  // namespace tn
