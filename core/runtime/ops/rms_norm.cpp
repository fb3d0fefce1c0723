#include "core/runtime/ops/rms_norm.h"

#include <cmath>

#include "core/runtime/autograd/grad_accum.h"
#include "core/runtime/dnnl/bf16.h"
#include "core/error.h"
#include "core/runtime/math/isa_clones.h"
#include "core/runtime/parallel.h"

namespace tn {

namespace {

/// Rows [begin, end) of the forward: norm[i] = ‖x_i‖, inv[i] = 1 / (‖x_i‖/√d + eps),
/// y_i = w ⊙ x_i · inv[i] (w null: no weight), and y16 = y rounded to bf16 when not null.
/// Compiled per instruction set.
TN_ISA_CLONES void forward_rows(const float* __restrict x, const float* __restrict w, int64_t d,
                                float inv_sqrt_d, float eps, float* __restrict y,
                                uint16_t* __restrict y16, float* __restrict inv,
                                float* __restrict norm, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    const float* xr = x + i * d;
    float ss = 0.0f;
#pragma omp simd reduction(+ : ss)
    for (int64_t j = 0; j < d; ++j) ss += xr[j] * xr[j];
    const float n = std::sqrt(ss);
    const float r = 1.0f / (n * inv_sqrt_d + eps);
    norm[i] = n;
    inv[i] = r;
    float* yr = y + i * d;
    if (w) {
#pragma omp simd
      for (int64_t j = 0; j < d; ++j) yr[j] = w[j] * xr[j] * r;
    } else {
#pragma omp simd
      for (int64_t j = 0; j < d; ++j) yr[j] = xr[j] * r;
    }
    if (y16) round_to_bf16(yr, y16 + i * d, d);  // the row is in cache
  }
}

/// Rows [begin, end) of dx: with g = dy ⊙ w (w null: g = dy),
/// dx = r g − (r² / (√d ‖x‖)) (g·x) x. Compiled per instruction set.
TN_ISA_CLONES void backward_rows(const float* __restrict x, const float* __restrict dy,
                                 const float* __restrict w, const float* __restrict inv,
                                 const float* __restrict norm, int64_t d, float inv_sqrt_d,
                                 float* __restrict dx, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    const float* xr = x + i * d;
    const float* dyr = dy + i * d;
    float* dxr = dx + i * d;
    const float r = inv[i], n = norm[i];
    float dot = 0.0f;
    if (w) {
#pragma omp simd reduction(+ : dot)
      for (int64_t j = 0; j < d; ++j) dot += dyr[j] * w[j] * xr[j];
    } else {
#pragma omp simd reduction(+ : dot)
      for (int64_t j = 0; j < d; ++j) dot += dyr[j] * xr[j];
    }
    const float coef = n > 0.0f ? r * r * inv_sqrt_d / n * dot : 0.0f;
    if (w) {
#pragma omp simd
      for (int64_t j = 0; j < d; ++j) dxr[j] = r * dyr[j] * w[j] - coef * xr[j];
    } else {
#pragma omp simd
      for (int64_t j = 0; j < d; ++j) dxr[j] = r * dyr[j] - coef * xr[j];
    }
  }
}

/// dw[j] += Σ_i dy[i, j] x[i, j] inv[i] over all rows, on the calling thread. Compiled per
/// instruction set.
TN_ISA_CLONES void weight_grad(const float* __restrict x, const float* __restrict dy,
                               const float* __restrict inv, int64_t rows, int64_t d,
                               float* __restrict dw) {
  for (int64_t i = 0; i < rows; ++i) {
    const float r = inv[i];
    const float* xr = x + i * d;
    const float* dyr = dy + i * d;
#pragma omp simd
    for (int64_t j = 0; j < d; ++j) dw[j] += dyr[j] * xr[j] * r;
  }
}

}  // namespace

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
  const int64_t min_rows = parallel_min_rows(d);
  // On a bf16 tape the output feeds bf16 products: its bf16 copy is written here, row by row,
  // rather than converted from memory by the first product (Tape::offer_bf16).
  std::shared_ptr<Bf16Buffer> y16;
  if (tape.bf16()) y16 = std::make_shared<Bf16Buffer>(rows * d);
  uint16_t* y16p = y16 ? y16->data() : nullptr;
  parallel_spans(rows, min_rows, [&](int64_t begin, int64_t end) {
    forward_rows(xp, wp, d, inv_sqrt_d, eps, yp, y16p, rp, np, begin, end);
  });
  Var result = make_var(std::move(y));
  if (y16) tape.offer_bf16(result, std::move(y16));
  if (!tape.needs_grad({&x, &weight})) return result;
  result->requires_grad = true;
  tape.record([x, weight, dy_ref = GradRef(result), inv, norm, rows, d, inv_sqrt_d]() {
    if (!dy_ref.has_grad()) return;
    const float* dy = dy_ref.grad().data();
    const float* xp = x->value.data();
    const float* wp = weight ? weight->value.data() : nullptr;
    const float* rp = inv.data();
    const float* np = norm.data();
    if (weight && weight->requires_grad) weight_grad(xp, dy, rp, rows, d, weight->grad_buf().data());
    if (!x->requires_grad) return;
    GradSink dx(x);
    float* dxp = dx.data();
    const int64_t min_rows = parallel_min_rows(d);
    parallel_spans(rows, min_rows, [&](int64_t begin, int64_t end) {
      backward_rows(xp, dy, wp, rp, np, d, inv_sqrt_d, dxp, begin, end);
    });
  });
  return result;
}

}  // namespace tn
