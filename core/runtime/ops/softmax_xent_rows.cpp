#include "core/runtime/ops/softmax_xent_rows.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/runtime/dnnl/bf16.h"
#include "core/runtime/ignore_index.h"
#include "core/runtime/math/fast_exp.h"
#include "core/runtime/math/isa_clones.h"
#include "core/runtime/math/row_max.h"

namespace tn {

namespace {

constexpr int kLanes = 16;
constexpr int64_t kChunk = 1024;  // floats per exp pass: a multiple of kLanes, 4 KiB on the stack

/// lane[l] += Σ v[j] over j ≡ l (mod 16), in order of j. The lanes are copied into a local array
/// for the loop so that the compiler keeps them in registers (one zmm, two ymm or four xmm)
/// rather than storing and reloading them every 16 values.
inline void add_lanes(float* __restrict lane, const float* __restrict v, int64_t n) {
  float acc[kLanes];
  for (int l = 0; l < kLanes; ++l) acc[l] = lane[l];
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] += v[j + l];
  for (int l = 0; j < n; ++j, ++l) acc[l] += v[j];
  for (int l = 0; l < kLanes; ++l) lane[l] = acc[l];
}

/// Σ_j exp(x_j − mx), each e_j also kept in e when it is not null. Per chunk, one pass computes
/// the exponentials and a second adds them into 16 fixed lanes (lane = j % 16), reduced at the
/// end by a fixed tree: every instruction set (4, 8 or 16 floats a vector) adds in the same order
/// and gets the same bits, about 1.6·√(cols/16)·u relative, where one lane would give 4.4e-6 at
/// 5,000 columns and the 4 lanes of SSE 1.1e-6 (test_softmax_xent_rows).
/// `next` (may be null): the row this thread reads next, asked into the cache (L2) chunk by chunk
/// while the exponentials are computed, so that its first pass does not wait on memory.
inline float exp_sum(const float* x, float mx, int64_t cols, float* e, const float* next) {
  float buf[kChunk];
  float lane[kLanes] = {};
  for (int64_t c0 = 0; c0 < cols; c0 += kChunk) {
    const int64_t n = std::min(kChunk, cols - c0);
    if (next)
      for (int64_t j = 0; j < n; j += kLanes) __builtin_prefetch(next + c0 + j, 0, 2);
    float* out = e ? e + c0 : buf;  // may be x itself (e over the logits)
    const float* in = x + c0;
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) out[j] = exp_nonpositive(in[j] - mx);
    add_lanes(lane, out, n);
  }
  for (int width = kLanes / 2; width > 0; width /= 2)  // 16 -> 8 -> 4 -> 2 -> 1, halves added
    for (int l = 0; l < width; ++l) lane[l] += lane[l + width];
  return lane[0];
}

/// One row of softmax_xent_rows (t != kIgnoreIndex): returns its lse − x_t and writes its gradient
/// row(s) when asked. Compiled per instruction set (TN_ISA_CLONES).
/// `scratch` holds cols floats (the exponentials when only gb is asked for); `next` is the row the
/// thread reads next (prefetched, see exp_sum), or null.
TN_ISA_CLONES double xent_row(const float* x, int64_t cols, int32_t t, float* gf, uint16_t* gb,
                              float grad_scale, float* scratch, const float* next) {
  const bool grad = gf || gb;
  const float mx = row_max(x, cols);
  const float xt = x[t];
  // e_j = exp(x_j − max) goes to the f32 gradient row, or to the thread's scratch row, for the
  // second sweep when a gradient is asked for. The scratch row stays in cache: writing e over the
  // logits instead would send a dirty copy of every row back to memory.
  float* e = gf ? gf : scratch;
  const float sum = exp_sum(x, mx, cols, grad ? e : nullptr, next);
  const double lse = static_cast<double>(mx) + std::log(static_cast<double>(sum));
  if (!grad) return lse - static_cast<double>(xt);
  const float inv = 1.f / sum, scaled = grad_scale * inv;
  const float gt = grad_scale * (e[t] * inv - 1.f);
  if (gb) {  // e (the scratch row, or gf before it is scaled) is in cache: scaled as it is rounded
    round_to_bf16_scaled(e, scaled, gb, cols);
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

XentRows softmax_xent_rows(const float* logits, int64_t rows, int64_t cols, const int32_t* targets,
                           float* grad_f32, uint16_t* grad_bf16, float grad_scale) {
  // Each row's loss is kept and the rows are added in order after the loop: an OpenMP reduction
  // would add per-thread partial sums, whose bits follow the thread count.
  std::vector<double> row_nll(static_cast<size_t>(rows), 0.0);
  const bool need_scratch = grad_bf16 && !grad_f32;
#pragma omp parallel
  {
    // One row of exponentials per thread, grown once and reused by every later call.
    thread_local std::vector<float> scratch;
    if (need_scratch && static_cast<int64_t>(scratch.size()) < cols) scratch.resize(cols);
#pragma omp for schedule(static)
    for (int64_t i = 0; i < rows; ++i) {
      float* gf = grad_f32 ? grad_f32 + i * cols : nullptr;
      uint16_t* gb = grad_bf16 ? grad_bf16 + i * cols : nullptr;
      if (targets[i] == kIgnoreIndex) {
        if (gf) std::memset(gf, 0, sizeof(float) * cols);
        if (gb) std::memset(gb, 0, sizeof(uint16_t) * cols);
        continue;
      }
      // The next row of this thread (static schedule: rows of one thread are contiguous).
      const float* next = i + 1 < rows ? logits + (i + 1) * cols : nullptr;
      row_nll[static_cast<size_t>(i)] =
          xent_row(logits + i * cols, cols, targets[i], gf, gb, grad_scale, scratch.data(), next);
    }
  }
  XentRows out;
  for (int64_t i = 0; i < rows; ++i) {
    if (targets[i] == kIgnoreIndex) continue;
    out.sum_nll += row_nll[static_cast<size_t>(i)];
    ++out.n_targets;
  }
  return out;
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
