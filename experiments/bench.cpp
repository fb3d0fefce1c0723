#include "experiments/bench.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "core/dnnl/matmul.h"
#include "core/error.h"
#include "core/memory_pool.h"
#include "core/optim/adamw.h"
#include "core/system.h"
#include "layers/models/transnormer.h"

namespace tn {

BenchResult bench_model(const ModelConfig& config, const BenchOptions& options) {
  if (config.vocab_size < 1) throw ConfigError("bench: model.vocab_size is not set; pass --vocab V");
  TransNormerModel model(config, options.seed);
  const int64_t n = options.batch * options.seq_len;
  Rng data_rng(options.seed + 1);
  std::vector<int32_t> tokens(n), targets(n);
  for (int64_t i = 0; i < n; ++i) {
    tokens[i] = static_cast<int32_t>(data_rng.next_u64() % config.vocab_size);
    targets[i] = static_cast<int32_t>(data_rng.next_u64() % config.vocab_size);
  }
  const auto params = model.params().parameters();
  AdamW optimizer(params, {0.9, 0.98, 1e-8, 0.01});
  Rng dropout_rng(options.seed + 2);
  BenchResult result;
  result.params = model.params().parameter_count();
  result.flops = model_flops(config, options.batch, options.seq_len);
  using Clock = std::chrono::steady_clock;

  Tape tape;
  tape.set_bf16(options.bf16);
  auto train_step = [&]() {
    ForwardContext ctx{tape, true, dropout_rng, nullptr};
    model.params().zero_grad();
    Var hidden = model.forward(ctx, tokens, options.batch, options.seq_len);
    LmLoss loss = model.lm_loss(ctx, hidden, targets);
    tape.backward(loss.loss);
    optimizer.step(5e-4);
    result.last_loss = loss.loss->value.data()[0];
  };
  for (int64_t i = 0; i < options.warmup; ++i) train_step();
  // One more step with its matrix products recorded, replayed alone below: the step's floor.
  matmul_record_begin();
  train_step();
  const std::vector<MatmulShape> products = matmul_record_end();
  result.matmul_calls = static_cast<int64_t>(products.size());
  auto start = Clock::now();
  for (int64_t i = 0; i < options.steps; ++i) train_step();
  const double train_s = std::chrono::duration<double>(Clock::now() - start).count();
  result.train_step_s = train_s / options.steps;
  result.train_tokens_per_s = static_cast<double>(n) * options.steps / train_s;
  result.train_gflops = result.flops.train_step() / result.train_step_s / 1e9;
  spdlog::info("train: {:.3f} s/step, {:.0f} tokens/s, {:.1f} model GFLOP/s", result.train_step_s,
               result.train_tokens_per_s, result.train_gflops);

  result.train_peak_rss_mb = peak_rss_mb();
  // The replay's scratch operands come after the training peak is read, so they do not count.
  result.matmul_only_s = matmul_replay_seconds(products);
  for (int rep = 0; rep < 2; ++rep)
    result.matmul_only_s = std::min(result.matmul_only_s, matmul_replay_seconds(products));
  pool_release_cached();  // training's cached buffers are not inference's

  Tape no_grad;
  no_grad.set_enabled(false);
  no_grad.set_bf16(options.bf16);
  auto infer = [&]() {
    ForwardContext ctx{no_grad, false, dropout_rng, nullptr};
    Var hidden = model.forward(ctx, tokens, options.batch, options.seq_len);
    model.lm_loss(ctx, hidden, targets);
  };
  for (int64_t i = 0; i < options.warmup; ++i) infer();
  start = Clock::now();
  for (int64_t i = 0; i < options.steps; ++i) infer();
  const double infer_s = std::chrono::duration<double>(Clock::now() - start).count();
  result.infer_tokens_per_s = static_cast<double>(n) * options.steps / infer_s;
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
