#include "experiments/bench_trainer.h"

#include <chrono>

namespace tn {

BenchTrainer::BenchTrainer(const ModelConfig& config, int64_t batch, int64_t seq_len,
                           uint64_t seed)
    : model_(config, seed),
      batch_(batch),
      seq_len_(seq_len),
      optimizer_(model_.params().parameters(), {0.9, 0.98, 1e-8, 0.01}),
      dropout_rng_(seed + 2) {
  Rng data_rng(seed + 1);
  // Drawn interleaved (token, target) as before, so a seed gives the same batch as earlier runs.
  tokens_.resize(batch * seq_len);
  targets_.resize(batch * seq_len);
  for (size_t i = 0; i < tokens_.size(); ++i) {
    tokens_[i] = static_cast<int32_t>(data_rng.next_u64() % config.vocab_size);
    targets_[i] = static_cast<int32_t>(data_rng.next_u64() % config.vocab_size);
  }
}

double BenchTrainer::train_step(Tape& tape) {
  const auto start = std::chrono::steady_clock::now();
  ForwardContext ctx{tape, true, dropout_rng_, nullptr};
  model_.params().zero_grad();
  Var hidden = model_.forward(ctx, tokens_, batch_, seq_len_);
  LmLoss loss = model_.lm_loss(ctx, hidden, targets_);
  tape.backward(loss.loss);
  optimizer_.step(5e-4);
  last_loss_ = loss.loss->value.data()[0];
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double BenchTrainer::infer(Tape& no_grad) {
  const auto start = std::chrono::steady_clock::now();
  ForwardContext ctx{no_grad, false, dropout_rng_, nullptr};
  Var hidden = model_.forward(ctx, tokens_, batch_, seq_len_);
  model_.lm_loss(ctx, hidden, targets_);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace tn
