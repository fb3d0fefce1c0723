#include "core/runtime/ops/mse_loss.h"

#include "core/error.h"

namespace tn {

LmLoss mse_loss(Tape& tape, const Var& predictions, const std::vector<float>& targets) {
  const int64_t n = predictions->value.numel();
  if (n != static_cast<int64_t>(targets.size()) || n == 0)
    throw ShapeError("[mse_loss] " + std::to_string(targets.size()) + " targets for predictions " +
                     shape_str(predictions->value.shape()));
  const float* p = predictions->value.data();
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double e = static_cast<double>(p[i]) - targets[i];
    sum += e * e;
  }
  LmLoss out;
  out.sum_nll = sum;
  out.n_targets = n;
  out.loss = make_var(Tensor::full({}, static_cast<float>(sum / static_cast<double>(n))));
  if (!tape.needs_grad({&predictions})) return out;
  out.loss->requires_grad = true;
  Var loss = out.loss;
  tape.record([predictions, loss, targets, n]() {
    if (!loss->has_grad()) return;
    const float scale = 2.0f * loss->grad().data()[0] / static_cast<float>(n);
    float* dp = predictions->grad_buf().data();
    const float* pv = predictions->value.data();
    for (int64_t i = 0; i < n; ++i) dp[i] += scale * (pv[i] - targets[i]);
  });
  return out;
}

}  // namespace tn
