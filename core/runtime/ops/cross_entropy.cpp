#include "core/runtime/ops/cross_entropy.h"

#include <cmath>

#include "core/error.h"

namespace tn {

LmLoss cross_entropy(Tape& tape, const Var& logits, const std::vector<int32_t>& targets) {
  const int64_t classes = logits->value.dim(-1);
  const int64_t rows = logits->value.numel() / classes;
  if (static_cast<int64_t>(targets.size()) != rows)
    throw ShapeError("[cross_entropy] " + std::to_string(targets.size()) + " targets for " +
                     std::to_string(rows) + " rows");
  Tensor probs = Tensor::empty({rows, classes});
  const float* lp = logits->value.data();
  double sum_nll = 0.0;
  int64_t n = 0;
  for (int64_t i = 0; i < rows; ++i) {
    const float* row = lp + i * classes;
    double max = row[0];
    for (int64_t j = 1; j < classes; ++j) max = std::max(max, static_cast<double>(row[j]));
    double sum = 0.0;
    for (int64_t j = 0; j < classes; ++j) sum += std::exp(row[j] - max);
    const double lse = max + std::log(sum);
    for (int64_t j = 0; j < classes; ++j) probs.data()[i * classes + j] = static_cast<float>(std::exp(row[j] - lse));
    const int32_t t = targets[i];
    if (t == kIgnoreIndex) continue;
    if (t < 0 || t >= classes)
      throw ShapeError("[cross_entropy] target " + std::to_string(t) + " outside [0, " +
                       std::to_string(classes) + ")");
    sum_nll += lse - row[t];
    ++n;
  }
  LmLoss out;
  out.sum_nll = sum_nll;
  out.n_targets = n;
  out.loss = make_var(Tensor::full({}, static_cast<float>(n ? sum_nll / n : 0.0)));
  if (!tape.needs_grad({&logits})) return out;
  out.loss->requires_grad = true;
  Var loss = out.loss;
  tape.record([logits, loss, probs, targets, rows, classes, n]() {
    if (!loss->has_grad() || n == 0) return;
    const float s = loss->grad().data()[0] / static_cast<float>(n);
    float* g = logits->grad_buf().data();
    for (int64_t i = 0; i < rows; ++i) {
      if (targets[i] == kIgnoreIndex) continue;
      for (int64_t j = 0; j < classes; ++j)
        g[i * classes + j] += s * (probs.data()[i * classes + j] - (j == targets[i] ? 1.0f : 0.0f));
    }
  });
  return out;
}

}  // namespace tn
