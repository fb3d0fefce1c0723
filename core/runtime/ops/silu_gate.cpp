#include "core/runtime/ops/silu_gate.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/runtime/dnnl/bf16.h"
#include "core/runtime/math/fast_exp.h"
#include "core/runtime/math/isa_clones.h"
#include "core/runtime/parallel.h"

namespace tn {
namespace {

/// σ(x) and 1 − σ(x) = σ(−x): 1 / (1 + e) and e / (1 + e) from e = exp(−|x|) <= 1, the larger one
/// for x >= 0; each exact to rounding (1 − σ is not a difference that cancels), no overflow for
/// any x, and selects that vectorise (select_float).
struct Sigmoid {
  float s, one_minus_s;
};
inline Sigmoid sigmoid(float x) {
  const float e = exp_nonpositive(-std::fabs(x));
  const float r = 1.0f / (1.0f + e);
  const bool pos = x >= 0.0f;
  return {select_float(pos, r, e * r), select_float(pos, e * r, r)};
}

TN_ISA_CLONES void forward_span(const float* __restrict a, const float* __restrict b,
                                float* __restrict y, int64_t begin, int64_t end) {
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) y[i] = a[i] * sigmoid(a[i]).s * b[i];
}

TN_ISA_CLONES void forward_span_bf16(const float* __restrict a, const float* __restrict b,
                                     uint16_t* __restrict y, int64_t begin, int64_t end) {
  constexpr int64_t kChunk = 1024;  // f32 values made on the stack (4 KiB), then rounded
  float chunk[kChunk];
  for (int64_t c0 = begin; c0 < end; c0 += kChunk) {
    const int64_t n = std::min(kChunk, end - c0);
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) chunk[i] = a[c0 + i] * sigmoid(a[c0 + i]).s * b[c0 + i];
    round_to_bf16(chunk, y + c0, n);
  }
}

constexpr int64_t kGateColumnBlock = 64;

/// silu_gate_backward_rows on columns [j0, j0 + width) of every row, rows in order: da and db of a
/// row go straight to their f32 destinations (to `scratch` when only bf16 is asked for) in the
/// pass that adds them into the column sums; the bf16 copies are read back from there. A thread
/// takes one contiguous range of columns, so every row is one run per array for the prefetcher.
/// scratch: [4 · width] floats.
TN_ISA_CLONES void backward_block(const float* __restrict a, const float* __restrict b,
                                  const float* __restrict dy, int64_t rows, int64_t cols,
                                  int64_t j0, int64_t width, const SiluGateGrads& g,
                                  float* __restrict scratch) {
  float* __restrict da_block = scratch;
  float* __restrict db_block = scratch + width;
  float* __restrict sum_a = scratch + 2 * width;
  float* __restrict sum_b = scratch + 3 * width;
#pragma omp simd
  for (int64_t j = 0; j < width; ++j) sum_a[j] = sum_b[j] = 0.f;
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t o = i * cols + j0;
    float* __restrict da = g.da ? g.da + o : da_block;
    float* __restrict db = g.db ? g.db + o : db_block;
#pragma omp simd
    for (int64_t j = 0; j < width; ++j) {
      const float av = a[o + j], bv = b[o + j], dv = dy[o + j];
      const Sigmoid sg = sigmoid(av);
      const float silu = av * sg.s;
      da[j] = dv * bv * (sg.s + silu * sg.one_minus_s);  // silu' = σ + a·σ(1 − σ)
      db[j] = dv * silu;
      sum_a[j] += da[j];
      sum_b[j] += db[j];
    }
    if (g.da16) round_to_bf16(da, g.da16 + o, width);
    if (g.db16) round_to_bf16(db, g.db16 + o, width);
  }
  if (g.bias_a)
    for (int64_t j = 0; j < width; ++j) g.bias_a[j0 + j] += sum_a[j];
  if (g.bias_b)
    for (int64_t j = 0; j < width; ++j) g.bias_b[j0 + j] += sum_b[j];
}

}  // namespace

void silu_gate_forward_bf16(const float* a, const float* b, uint16_t* y, int64_t n) {
  parallel_spans(n, kParallelMinElements,
                 [&](int64_t s, int64_t e) { forward_span_bf16(a, b, y, s, e); });
}

void silu_gate_backward_rows(const float* a, const float* b, const float* dy, int64_t rows,
                             int64_t cols, const SiluGateGrads& grads) {
  const int64_t blocks = (cols + kGateColumnBlock - 1) / kGateColumnBlock;
  const int64_t min_blocks = rows * cols > kParallelMinElements ? 0 : blocks;
  parallel_spans(blocks, min_blocks, [&](int64_t begin, int64_t end) {
    if (begin == end) return;
    const int64_t j0 = begin * kGateColumnBlock;
    const int64_t width = std::min(end * kGateColumnBlock, cols) - j0;
    thread_local std::vector<float> scratch;  // grown once, reused by every later call
    if (scratch.size() < size_t(4 * width)) scratch.resize(size_t(4 * width));
    backward_block(a, b, dy, rows, cols, j0, width, grads, scratch.data());
  });
}

void silu_gate_forward(const float* a, const float* b, float* y, int64_t n) {
  parallel_spans(n, kParallelMinElements, [&](int64_t s, int64_t e) { forward_span(a, b, y, s, e); });
}

}  // namespace tn
