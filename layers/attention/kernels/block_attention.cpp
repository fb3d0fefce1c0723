// Block-diagonal attention engine, parallel over (batch, head, block); blocks are independent.
// Legend: B batch, T seq_len, H n_heads, D d_head, W block_size; rows of one (b, h) are H·D apart.
#include "layers/attention/kernels/block_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "layers/attention/kernels/kernel_utils.h"

namespace tn::kernel_detail {
namespace {

/// One (b, h, block): pointers at the block's first row; probs at row 0 of the block ([n][W]).
struct BlockPtrs {
  const float* q;
  const float* k;
  const float* v;
  const uint8_t* valid;  // key_valid for the block's keys, or null
  int64_t stride;        // H·D
  int64_t n;             // rows in this block (W, or fewer for the last one)
  int64_t width;         // W: row length of probs
};

template <int kD>
void forward_block(const BlockPtrs& p, int64_t d_head, DiagInnerKind inner, bool causal, float* __restrict out,
                   float* __restrict probs, float* __restrict acc) {
  const int64_t D = kD > 0 ? kD : d_head;
  const int64_t st = p.stride, n = p.n, W = p.width;
  for (int64_t i = 0; i < n; ++i) {
    const float* qi = p.q + i * st;
    float* __restrict prow = probs + i * W;
    const int64_t jmax = causal ? i + 1 : n;
    fill_zero(prow, W);
    if (inner == DiagInnerKind::Relu) {
      for (int64_t j = 0; j < jmax; ++j) {
        if (p.valid && !p.valid[j]) continue;
        prow[j] = std::max(dot(qi, p.k + j * st, D), 0.f);
      }
    } else {
      const float neg_inf = -std::numeric_limits<float>::infinity();
      float row_max = neg_inf;
      for (int64_t j = 0; j < jmax; ++j) {
        prow[j] = (p.valid && !p.valid[j]) ? neg_inf : dot(qi, p.k + j * st, D);
        row_max = std::max(row_max, prow[j]);
      }
      if (row_max == neg_inf) {  // no unmasked key: A = 0
        fill_zero(prow, jmax);
      } else {
        // Separate branch-free loops so the exp vectorises; masked entries are exp(-inf) = 0.
        for (int64_t j = 0; j < jmax; ++j) prow[j] = exp_nonpositive(prow[j] - row_max);
        float sum = 0.f;  // plain in-order sum: the same bits whether or not the compiler vectorises it
        for (int64_t j = 0; j < jmax; ++j) sum += prow[j];
        const float inv = 1.f / sum;  // sum >= 1: the max entry contributes exp(0)
        for (int64_t j = 0; j < jmax; ++j) prow[j] *= inv;
      }
    }
    fill_zero(acc, D);
    for (int64_t j = 0; j < jmax; ++j)
      if (prow[j] != 0.f) axpy(prow[j], p.v + j * st, acc, D);
    std::copy(acc, acc + D, out + i * st);
  }
}

template <int kD>
void backward_block(const BlockPtrs& p, int64_t d_head, DiagInnerKind inner, bool causal,
                    const float* __restrict probs, const float* __restrict d_out, float* __restrict dq,
                    float* __restrict dk, float* __restrict dv, float* __restrict acc, float* __restrict d_logit) {
  const int64_t D = kD > 0 ? kD : d_head;
  const int64_t st = p.stride, n = p.n, W = p.width;
  for (int64_t j = 0; j < n; ++j) {
    fill_zero(dk + j * st, D);
    fill_zero(dv + j * st, D);
  }
  for (int64_t i = 0; i < n; ++i) {
    const float* qi = p.q + i * st;
    const float* gi = d_out + i * st;
    const float* prow = probs + i * W;
    const int64_t jmax = causal ? i + 1 : n;
    // d_logit_j = dA_j = g_i·v_j where A_ij != 0 (masked keys and relu zeros have no gradient).
    for (int64_t j = 0; j < jmax; ++j) d_logit[j] = prow[j] != 0.f ? dot(gi, p.v + j * st, D) : 0.f;
    if (inner == DiagInnerKind::Softmax) {
      // Through dot(): a plain `c += p*dA` loop is vectorised as an in-order reduction without FMA while
      // its scalar version uses FMA, so the bits would depend on jmax (breaks padding invariance).
      const float c = dot(prow, d_logit, jmax);
      for (int64_t j = 0; j < jmax; ++j) d_logit[j] = prow[j] * (d_logit[j] - c);
    }
    fill_zero(acc, D);
    for (int64_t j = 0; j < jmax; ++j) {
      if (prow[j] == 0.f) continue;
      axpy(d_logit[j], p.k + j * st, acc, D);
      axpy(d_logit[j], qi, dk + j * st, D);
      axpy(prow[j], gi, dv + j * st, D);
    }
    std::copy(acc, acc + D, dq + i * st);
  }
}

}  // namespace

void block_attention_forward(const AttentionDims& dims, int64_t block_size, DiagInnerKind inner, bool causal,
                             const uint8_t* key_valid, const float* q, const float* k, const float* v, float* out,
                             float* probs) {
  const int64_t B = dims.batch, T = dims.seq_len, H = dims.n_heads, D = dims.d_head, W = block_size;
  if (B * T * H == 0) return;
  const int64_t n_blocks = (T + W - 1) / W;
  dispatch_d_head(D, [&]<int kD>() {
#pragma omp parallel for collapse(3) schedule(static)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t blk = 0; blk < n_blocks; ++blk) {
          const int64_t s0 = blk * W;
          const int64_t off = ((b * T + s0) * H + h) * D;
          BlockPtrs p{q + off, k + off, v + off, key_valid ? key_valid + b * T + s0 : nullptr, H * D,
                      std::min(W, T - s0), W};
          forward_block<kD>(p, D, inner, causal, out + off, probs + ((b * H + h) * T + s0) * W,
                            thread_scratch(size_t(D)));
        }
  });
}

void block_attention_backward(const AttentionDims& dims, int64_t block_size, DiagInnerKind inner, bool causal,
                              const uint8_t* key_valid, const float* q, const float* k, const float* v,
                              const float* probs, const float* d_out, float* dq, float* dk, float* dv) {
  const int64_t B = dims.batch, T = dims.seq_len, H = dims.n_heads, D = dims.d_head, W = block_size;
  if (B * T * H == 0) return;
  const int64_t n_blocks = (T + W - 1) / W;
  dispatch_d_head(D, [&]<int kD>() {
#pragma omp parallel for collapse(3) schedule(static)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t blk = 0; blk < n_blocks; ++blk) {
          const int64_t s0 = blk * W;
          const int64_t off = ((b * T + s0) * H + h) * D;
          BlockPtrs p{q + off, k + off, v + off, key_valid ? key_valid + b * T + s0 : nullptr, H * D,
                      std::min(W, T - s0), W};
          float* scratch = thread_scratch(size_t(D + W));
          backward_block<kD>(p, D, inner, causal, probs + ((b * H + h) * T + s0) * W, d_out + off, dq + off,
                             dk + off, dv + off, scratch, scratch + D);
        }
  });
}

}  // namespace tn::kernel_detail
