#include "core/ops/rms_norm.h"

#include <cmath>

#include "core/autograd/grad_accum.h"
#include "core/error.h"

namespace tn {

Var rms_norm(Tape& tape, const Var& x, const Var& weight, float eps) {
  const int64_t d = x->value.dim(-1);
  const int64_t rows = x->value.numel() / d;
  if (weight && weight->value.numel() != d)
    throw ShapeError("[rms_norm] weight has " + std::to_string(weight->value.numel()) +
                     " entries, x has width " + std::to_string(d));
  Tensor y = Tensor::empty(x->value.shape());
  Tensor inv = Tensor::empty({rows});  // r = 1 / (‖x‖/√d + eps)
  Tensor norm = Tensor::empty({rows});  // ‖x‖
  const float* xp = x->value.data();
  const float* wp = weight ? weight->value.data() : nullptr;
  float* yp = y.data();
  float* rp = inv.data();
  float* np = norm.data();
  const float inv_sqrt_d = 1.0f / std::sqrt(static_cast<float>(d));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < rows; ++i) {
    const float* xr = xp + i * d;
    float ss = 0.0f;
#pragma omp simd reduction(+ : ss)
    for (int64_t j = 0; j < d; ++j) ss += xr[j] * xr[j];
    const float n = std::sqrt(ss);
    const float r = 1.0f / (n * inv_sqrt_d + eps);
    np[i] = n;
    rp[i] = r;
    float* yr = yp + i * d;
    if (wp) {
#pragma omp simd
      for (int64_t j = 0; j < d; ++j) yr[j] = wp[j] * xr[j] * r;
    } else {
#pragma omp simd
      for (int64_t j = 0; j < d; ++j) yr[j] = xr[j] * r;
    }
  }
  Var result = make_var(std::move(y));
  if (!tape.needs_grad({&x, &weight})) return result;
  result->requires_grad = true;
  tape.record([x, weight, result, inv, norm, rows, d, inv_sqrt_d]() {
    if (!result->has_grad()) return;
    const float* dy = result->grad.data();
    const float* xp = x->value.data();
    const float* wp = weight ? weight->value.data() : nullptr;
    const float* rp = inv.data();
    const float* np = norm.data();
    if (weight && weight->requires_grad) {
      float* dw = weight->grad_buf().data();
      for (int64_t i = 0; i < rows; ++i) {
        const float r = rp[i];
        const float* xr = xp + i * d;
        const float* dyr = dy + i * d;
#pragma omp simd
        for (int64_t j = 0; j < d; ++j) dw[j] += dyr[j] * xr[j] * r;
      }
    }
    if (!x->requires_grad) return;
    GradSink dx(x);
    float* dxp = dx.data();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < rows; ++i) {
      const float* xr = xp + i * d;
      const float* dyr = dy + i * d;
      float* dxr = dxp + i * d;
      const float r = rp[i];
      const float n = np[i];
      // g = dy ⊙ weight; dx = r g − (r² / (√d ‖x‖)) (g·x) x
      float dot = 0.0f;
      if (wp) {
#pragma omp simd reduction(+ : dot)
        for (int64_t j = 0; j < d; ++j) dot += dyr[j] * wp[j] * xr[j];
      } else {
#pragma omp simd reduction(+ : dot)
        for (int64_t j = 0; j < d; ++j) dot += dyr[j] * xr[j];
      }
      const float coef = n > 0.0f ? r * r * inv_sqrt_d / n * dot : 0.0f;
      if (wp) {
#pragma omp simd
        for (int64_t j = 0; j < d; ++j) dxr[j] = r * dyr[j] * wp[j] - coef * xr[j];
      } else {
#pragma omp simd
        for (int64_t j = 0; j < d; ++j) dxr[j] = r * dyr[j] - coef * xr[j];
      }
    }
  });
  return result;
}

}  // namespace tn
