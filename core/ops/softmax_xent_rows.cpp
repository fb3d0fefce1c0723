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

constexpr int kLanes = 16;

/// Σ_j exp(x_j − mx), each e_j also stored when kStore. The sum runs in 16 fixed lanes (lane =
/// j % 16) reduced by a fixed tree, so every instruction set (4, 8 or 16 floats a vector) adds in
/// the same order and gets the same rounding: about 1.6·√(cols/16)·u relative, where one lane
/// would give 4.4e-6 at 5,000 columns and the 4 lanes of SSE 1.1e-6 (test_softmax_xent_rows).
template <bool kStore>
inline float exp_sum(const float* x, float mx, int64_t cols, float* e) {
  float lane[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= cols; j += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const float v = exp_nonpositive(x[j + l] - mx);
      if constexpr (kStore) e[j + l] = v;
      lane[l] += v;
    }
  for (int l = 0; j < cols; ++j, ++l) {
    const float v = exp_nonpositive(x[j] - mx);
    if constexpr (kStore) e[j] = v;
    lane[l] += v;
  }
  for (int width = kLanes / 2; width > 0; width /= 2)
    for (int l = 0; l < width; ++l) lane[l] += lane[l + width];
  return lane[0];
}

/// One row of softmax_xent_rows (t != kIgnoreIndex): returns its lse − x_t and writes its gradient
/// row(s) when asked. Compiled per instruction set (TN_ISA_CLONES).
TN_ISA_CLONES double xent_row(float* x, int64_t cols, int32_t t, float* gf, uint16_t* gb,
                              float grad_scale) {
  const bool grad = gf || gb;
  const float mx = row_max(x, cols);
  const float xt = x[t];
  // e_j = exp(x_j − max) goes to the f32 gradient row (or scratch over the logits) for the
  // second sweep when a gradient is asked for.
  float* e = gf ? gf : x;
  const float sum = grad ? exp_sum<true>(x, mx, cols, e) : exp_sum<false>(x, mx, cols, nullptr);
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
