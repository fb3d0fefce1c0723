#pragma once
// AdamW (Loshchilov & Hutter; torch.optim.AdamW, fairseq's `adam --weight-decay` is the same
// decoupled form): p ← p − lr·wd·p; m ← β1 m + (1−β1) g; v ← β2 v + (1−β2) g²;
// p ← p − (lr / (1−β1^t)) · m / (√v / √(1−β2^t) + eps). Applied to every parameter, biases included.
#include <string>
#include <utility>
#include <vector>

#include "core/runtime/autograd/tape.h"

namespace tn {

struct AdamWOptions {
  double beta1 = 0.9, beta2 = 0.98, eps = 1e-8, weight_decay = 0.01;
};

class AdamW {
 public:
  /// params: the trainable variables (their grads are read at step()).
  AdamW(std::vector<std::pair<std::string, Var>> params, AdamWOptions options);
  /// One update with learning rate lr; parameters without a gradient are still decayed, as torch
  /// skips only params whose .grad is None (ours is allocated on first backward).
  void step(double lr);
  int64_t steps() const { return step_; }
  /// Optimizer state for checkpoints ("<name>.exp_avg", "<name>.exp_avg_sq").
  const std::vector<std::pair<std::string, Var>>& params() const { return params_; }
  std::vector<Tensor>& exp_avg() { return exp_avg_; }
  std::vector<Tensor>& exp_avg_sq() { return exp_avg_sq_; }
  const std::vector<Tensor>& exp_avg() const { return exp_avg_; }
  const std::vector<Tensor>& exp_avg_sq() const { return exp_avg_sq_; }
  void set_steps(int64_t steps) { step_ = steps; }

 private:
  std::vector<std::pair<std::string, Var>> params_;
  AdamWOptions options_;
  std::vector<Tensor> exp_avg_, exp_avg_sq_;
  int64_t step_ = 0;
};

/// Global L2 norm of every gradient (√Σ g²), and, when max_norm > 0 and the norm exceeds it,
/// scales the gradients by max_norm / (norm + 1e-6) (torch.nn.utils.clip_grad_norm_).
/// Returns the norm before clipping. The sum of squares runs over fixed chunks of 16,384 entries
/// added in order (parallel_sum): the same bits on any thread count.
double clip_grad_norm(const std::vector<std::pair<std::string, Var>>& params, double max_norm);

}  // namespace tn
