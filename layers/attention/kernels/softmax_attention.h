#pragma once
// Vanilla softmax attention per head: docs/model.md §8, transnormer_ref.py
// `SoftmaxAttention` (after projections, 1/sqrt(D) scaling and relative PE, all done by the
// caller).
//
// B batch, T seq_len, H n_heads, D d_head. q, k, v, out and gradients: [B, T, H, D];
// key_valid: [B, T] (1 = real key, 0 = padding) or null; stats: [B, H, T, 2], what the forward
// keeps for the backward: per query row the max logit and the reciprocal of its sum of
// exponentials (the log-sum-exp in two parts), {−inf, 0} for a row with no valid key.
//   out = softmax(q kᵀ + mask) v, mask = -inf for j > i (causal) and for key_valid == 0;
//   a row with no unmasked key gives probs 0 and out 0 (no NaN).
// Attention dropout (training only; the reference's nn.Dropout on P): out = (P ⊙ M / (1 − p)) v
// with M_ij = 1 iff counter_uniform(dropout_key, ((b·H + h)·T + i)·T + j) >= p (core/runtime/rng.h), the
// flat index of (b, h, i, j) in a [B, H, T, T] tensor: the same mask for any thread count, and the
// same as diag_attention's for the same key. Masked entries stay 0. p = 0 (the default) is no
// dropout, bit for bit. The backward recomputes P tile by tile from q, k and stats (the same bits
// as the forward's) and M from the key, so pass it the forward's dropout_p and dropout_key.
// No T×T matrix is ever held: the fast form works in tiles of query rows against all keys, its
// products through oneDNN's sgemm (full_attention.h: the tiles, the padding and masking rules).
// Every function throws ShapeError on negative dims, d_head < 1 or
// dropout_p outside [0, 1).
#include <cstdint>

#include "layers/attention/kernels/attention_dims.h"

namespace tn {

/// Floats of the stats buffer: B·H·T·2.
inline int64_t softmax_stats_floats(const AttentionDims& dims) {
  return dims.batch * dims.n_heads * dims.seq_len * 2;
}

/// Fast form, parallel over (batch, head). stats: caller buffer of softmax_stats_floats(dims),
/// saved for backward.
void softmax_attention_forward(const AttentionDims& dims, bool causal, const uint8_t* key_valid,
                               const float* q, const float* k, const float* v, float* out,
                               float* stats, float dropout_p = 0.f, uint64_t dropout_key = 0);

/// Gradients given the forward's stats and d_out; dq, dk, dv are OVERWRITTEN.
void softmax_attention_backward(const AttentionDims& dims, bool causal, const uint8_t* key_valid,
                                const float* q, const float* k, const float* v, const float* stats,
                                const float* d_out, float* dq, float* dk, float* dv,
                                float dropout_p = 0.f, uint64_t dropout_key = 0);

/// Trusted reference: the full masked T×T logits, softmax, dropout and product, unthreaded, in
/// double.
/// Writes out.
void softmax_attention_forward_naive(const AttentionDims& dims, bool causal,
                                     const uint8_t* key_valid, const float* q, const float* k,
                                     const float* v, float* out, float dropout_p = 0.f,
                                     uint64_t dropout_key = 0);
/// Same in double throughout (for finite-difference checks).
void softmax_attention_forward_naive(const AttentionDims& dims, bool causal,
                                     const uint8_t* key_valid, const double* q, const double* k,
                                     const double* v, double* out, float dropout_p = 0.f,
                                     uint64_t dropout_key = 0);

/// Trusted reference gradients in double (recomputes P); dq, dk, dv overwritten.
void softmax_attention_backward_naive(const AttentionDims& dims, bool causal,
                                      const uint8_t* key_valid, const float* q, const float* k,
                                      const float* v, const float* d_out, float* dq, float* dk,
                                      float* dv, float dropout_p = 0.f, uint64_t dropout_key = 0);

}  // namespace tn
