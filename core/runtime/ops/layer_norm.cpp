#include "core/runtime/ops/layer_norm.h"

#include <cmath>

#include "core/runtime/autograd/grad_accum.h"

namespace tn {

Var layer_norm(Tape& tape, const Var& x, const Var& weight, const Var& bias, float eps) {
  const int64_t d = x->value.dim(-1);
  const int64_t rows = x->value.numel() / d;
  Tensor y = Tensor::empty(x->value.shape());
  Tensor xhat = Tensor::empty(x->value.shape());
  Tensor rstd = Tensor::empty({rows});
  const float* xp = x->value.data();
  const float* wp = weight ? weight->value.data() : nullptr;
  const float* bp = bias ? bias->value.data() : nullptr;
  float* yp = y.data();
  float* hp = xhat.data();
  float* rp = rstd.data();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < rows; ++i) {
    const float* xr = xp + i * d;
    double mean = 0.0, var = 0.0;
    for (int64_t j = 0; j < d; ++j) mean += xr[j];
    mean /= d;
    for (int64_t j = 0; j < d; ++j) var += (xr[j] - mean) * (xr[j] - mean);
    var /= d;
    const float r = static_cast<float>(1.0 / std::sqrt(var + eps));
    rp[i] = r;
    for (int64_t j = 0; j < d; ++j) {
      const float h = static_cast<float>(xr[j] - mean) * r;
      hp[i * d + j] = h;
      yp[i * d + j] = h * (wp ? wp[j] : 1.0f) + (bp ? bp[j] : 0.0f);
    }
  }
  Var result = make_var(std::move(y));
  if (!tape.needs_grad({&x, &weight, &bias})) return result;
  result->requires_grad = true;
  tape.record([x, weight, bias, result, xhat, rstd, rows, d]() {
    if (!result->has_grad()) return;
    const float* dy = result->grad().data();
    const float* hp = xhat.data();
    const float* wp = weight ? weight->value.data() : nullptr;
    if (weight && weight->requires_grad) {
      float* dw = weight->grad_buf().data();
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < d; ++j) dw[j] += dy[i * d + j] * hp[i * d + j];
    }
    if (bias && bias->requires_grad) {
      float* db = bias->grad_buf().data();
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < d; ++j) db[j] += dy[i * d + j];
    }
    if (!x->requires_grad) return;
    GradSink dx(x);
    float* dxp = dx.data();
    const float* rp = rstd.data();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < rows; ++i) {
      // g = dy ⊙ w; dx = r (g − mean(g) − xhat · mean(g ⊙ xhat))
      double sum_g = 0.0, sum_gh = 0.0;
      for (int64_t j = 0; j < d; ++j) {
        const float g = dy[i * d + j] * (wp ? wp[j] : 1.0f);
        sum_g += g;
        sum_gh += g * hp[i * d + j];
      }
      const float mg = static_cast<float>(sum_g / d), mgh = static_cast<float>(sum_gh / d);
      for (int64_t j = 0; j < d; ++j) {
        const float g = dy[i * d + j] * (wp ? wp[j] : 1.0f);
        dxp[i * d + j] = rp[i] * (g - mg - hp[i * d + j] * mgh);
      }
    }
  });
  return result;
}

}  // namespace tn
