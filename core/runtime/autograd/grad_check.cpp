#include "core/runtime/autograd/grad_check.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/error.h"

namespace tn {

CheckLoss::CheckLoss(Var v) : var(std::move(v)), value(var->value.data()[0]) {}

CheckLoss weighted_loss(Tape& tape, const Var& x, const Tensor& weights) {
  if (weights.numel() != x->value.numel())
    throw ShapeError("[weighted_sum] weights " + shape_str(weights.shape()) + " vs x " +
                     shape_str(x->value.shape()));
  double acc = 0.0;
  const float* xp = x->value.data();
  const float* wp = weights.data();
  for (int64_t i = 0; i < weights.numel(); ++i) acc += static_cast<double>(xp[i]) * wp[i];
  Var result = make_var(Tensor::full({}, static_cast<float>(acc)));
  if (!tape.needs_grad({&x})) return {result, acc};
  result->requires_grad = true;
  tape.record([x, weights, result]() {
    const float g = result->grad().data()[0];
    float* dx = x->grad_buf().data();
    const float* wp = weights.data();
    for (int64_t i = 0; i < weights.numel(); ++i) dx[i] += g * wp[i];
  });
  return {result, acc};
}

Var weighted_sum(Tape& tape, const Var& x, const Tensor& weights) {
  return weighted_loss(tape, x, weights).var;
}

GradCheckResult grad_check(const std::function<CheckLoss(Tape&)>& loss_fn,
                           const std::vector<Var>& inputs, const GradCheckOptions& options) {
  for (const Var& v : inputs) v->grad() = Tensor();
  Tape tape;
  const Var loss = loss_fn(tape).var;
  tape.backward(loss);
  GradCheckResult result;
  Tape no_grad;
  no_grad.set_enabled(false);
  for (size_t k = 0; k < inputs.size(); ++k) {
    Var v = inputs[k];
    const Tensor analytic = v->has_grad() ? v->grad().clone() : Tensor::zeros(v->value.shape());
    const int64_t n = v->value.numel();
    const int64_t stride = std::max<int64_t>(1, n / options.max_entries);
    for (int64_t i = 0; i < n; i += stride) {
      float* p = v->value.data() + i;
      const float saved = *p;
      // D(h) over the step the input really took (saved ± h rounded to f32).
      auto central = [&](double h) {
        const float up = saved + static_cast<float>(h), down = saved - static_cast<float>(h);
        *p = up;
        const double plus = loss_fn(no_grad).value;
        *p = down;
        const double minus = loss_fn(no_grad).value;
        *p = saved;
        return (plus - minus) / (static_cast<double>(up) - static_cast<double>(down));
      };
      const double numeric = options.richardson
                                 ? (4 * central(options.eps / 2) - central(options.eps)) / 3
                                 : central(options.eps);
      const double a = analytic.data()[i];
      const double rel = std::abs(a - numeric) / std::max(std::abs(numeric), options.floor);
      if (rel > result.max_rel_error) {
        result.max_rel_error = rel;
        std::ostringstream msg;
        msg << "input " << k << " [" << i << "]: analytic " << a << " numeric " << numeric;
        result.worst = msg.str();
      }
    }
  }
  return result;
}

GradCheckResult grad_check(const std::function<CheckLoss(Tape&)>& loss_fn,
                           const std::vector<Var>& inputs, double eps, int max_entries,
                           double floor) {
  return grad_check(loss_fn, inputs,
                    GradCheckOptions{.eps = eps, .max_entries = max_entries, .floor = floor});
}

}  // namespace tn
