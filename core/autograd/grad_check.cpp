#include "core/autograd/grad_check.h"

#include <cmath>
#include <sstream>

#include "core/error.h"

namespace tn {

Var weighted_sum(Tape& tape, const Var& x, const Tensor& weights) {
  if (weights.numel() != x->value.numel())
    throw ShapeError("[weighted_sum] weights " + shape_str(weights.shape()) + " vs x " +
                     shape_str(x->value.shape()));
  double acc = 0.0;
  const float* xp = x->value.data();
  const float* wp = weights.data();
  for (int64_t i = 0; i < weights.numel(); ++i) acc += static_cast<double>(xp[i]) * wp[i];
  Var result = make_var(Tensor::full({}, static_cast<float>(acc)));
  if (!tape.needs_grad({&x})) return result;
  result->requires_grad = true;
  tape.record([x, weights, result]() {
    const float g = result->grad.data()[0];
    float* dx = x->grad_buf().data();
    const float* wp = weights.data();
    for (int64_t i = 0; i < weights.numel(); ++i) dx[i] += g * wp[i];
  });
  return result;
}

GradCheckResult grad_check(const std::function<Var(Tape&)>& loss_fn,
                           const std::vector<Var>& inputs, double eps, int max_entries,
                           double floor) {
  for (const Var& v : inputs) v->grad = Tensor();
  Tape tape;
  Var loss = loss_fn(tape);
  tape.backward(loss);
  GradCheckResult result;
  Tape no_grad;
  no_grad.set_enabled(false);
  for (size_t k = 0; k < inputs.size(); ++k) {
    Var v = inputs[k];
    const Tensor analytic = v->has_grad() ? v->grad.clone() : Tensor::zeros(v->value.shape());
    const int64_t n = v->value.numel();
    const int64_t stride = std::max<int64_t>(1, n / max_entries);
    for (int64_t i = 0; i < n; i += stride) {
      float* p = v->value.data() + i;
      const float saved = *p;
      *p = saved + static_cast<float>(eps);
      const double plus = loss_fn(no_grad)->value.data()[0];
      *p = saved - static_cast<float>(eps);
      const double minus = loss_fn(no_grad)->value.data()[0];
      *p = saved;
      const double numeric = (plus - minus) / (2 * eps);
      const double a = analytic.data()[i];
      const double rel = std::abs(a - numeric) / std::max(std::abs(numeric), floor);
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

}  // namespace tn
