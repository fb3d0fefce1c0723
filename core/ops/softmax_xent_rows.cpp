#include "core/ops/softmax_xent_rows.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/dnnl/bf16.h"
#include "core/ignore_index.h"
#include "core/math/fast_exp.h"
#include "core/math/isa_clones.h"
#include "core/math/row_max.h"

namespace tn {

namespace {

/// One row of softmax_xent_rows (t != kIgnoreIndex): returns its lse − x_t and writes its gradient
/// row(s) when asked. Compiled per instruction set (TN_ISA_CLONES).
TN_ISA_CLONES double xent_row(float* x, int64_t cols, int32_t t, float* gf, uint16_t* gb,
                              float grad_scale) {
  const bool grad = gf || gb;
  const float mx = row_max(x, cols);
  const float xt = x[t];
  // e_j = exp(x_j − max) goes to the f32 gradient row (or scratch over the logits) for the
  // second sweep; the sum is a float per lane, then reduced.
  float* e = gf ? gf : x;
  float sum = 0.f;
  if (grad) {
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < cols; ++j) {
      const float v = exp_nonpositive(x[j] - mx);
      e[j] = v;
      sum += v;
    }
  } else {
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < cols; ++j) sum += exp_nonpositive(x[j] - mx);
  }
  const double lse = static_cast<double>(mx) + std::log(static_cast<double>(sum));
  if (!grad) return lse - static_cast<double>(xt);
  const float inv = 1.f / sum, scaled = grad_scale * inv;
  const float gt = grad_scale * (e[t] * inv - 1.f);
  if (gb) {
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) gb[j] = to_bf16_bits(e[j] * scaled);
    gb[t] = to_bf16_bits(gt);
  }
  if (gf) {
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) gf[j] = e[j] * scaled;
    gf[t] = gt;
  }
  return lse - static_cast<double>(xt);
}

}  // namespace

XentRows softmax_xent_rows(float* logits, int64_t rows, int64_t cols, const int32_t* targets,
                           float* grad_f32, uint16_t* grad_bf16, float grad_scale) {
  double sum_nll = 0.0;
  int64_t n_targets = 0;
#pragma omp parallel for schedule(static) reduction(+ : sum_nll, n_targets)
  for (int64_t i = 0; i < rows; ++i) {
    float* gf = grad_f32 ? grad_f32 + i * cols : nullptr;
    uint16_t* gb = grad_bf16 ? grad_bf16 + i * cols : nullptr;
    if (targets[i] == kIgnoreIndex) {
      if (gf) std::memset(gf, 0, sizeof(float) * cols);
      if (gb) std::memset(gb, 0, sizeof(uint16_t) * cols);
      continue;
    }
    sum_nll += xent_row(logits + i * cols, cols, targets[i], gf, gb, grad_scale);
    ++n_targets;
  }
  return {sum_nll, n_targets};
}

XentRows softmax_xent_rows_naive(const float* logits, int64_t rows, int64_t cols,
                                 const int32_t* targets, float* grad_f32) {
  XentRows out;
  for (int64_t i = 0; i < rows; ++i) {
    const float* x = logits + i * cols;
    const int32_t t = targets[i];
    if (t == kIgnoreIndex) {
      if (grad_f32) std::fill(grad_f32 + i * cols, grad_f32 + (i + 1) * cols, 0.f);
      continue;
    }
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < cols; ++j) mx = std::max(mx, static_cast<double>(x[j]));
    double sum = 0.0;
    for (int64_t j = 0; j < cols; ++j) sum += std::exp(x[j] - mx);
    const double lse = mx + std::log(sum);
    out.sum_nll += lse - x[t];
    ++out.n_targets;
    if (grad_f32)
      for (int64_t j = 0; j < cols; ++j)
        grad_f32[i * cols + j] = static_cast<float>(std::exp(x[j] - lse) - (j == t ? 1.0 : 0.0));
  }
  return out;
}

}  // namespace tn
