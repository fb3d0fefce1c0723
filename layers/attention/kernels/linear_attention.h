#pragma once
// Kernelised (linear) attention numerator/denominator: docs/model.md §6,
// transnormer_ref.py `linear_attention_terms`. phi and relative PE are applied by the caller.
//
// B batch, T seq_len, H n_heads, K = key_width(dims) (dims.d_key, or d_head when it is 0), D
// d_head. q, k, dq, dk: [B, T, H, K] (feature maps: Performer's m, cosFormer's 2·d_head, else
// d_head); v, num, d_num, dv: [B, T, H, D]; den, d_den: [B, T, H].
//   num_i = Σ_j (q_i·k_j) v_j,   den_i = Σ_j q_i·k_j,   over j ≤ i when causal, all j otherwise.
// Every function throws ShapeError on negative dims, d_head < 1, d_key < 0 or chunk < 1.
// With d_key 0 or d_head the results are bit-identical to each other (same code path).
#include <cstdint>

#include "layers/attention/kernels/attention_dims.h"

namespace tn {

/// Fast form, parallel over (batch, head). Causal: chunked, O(T·chunk·(K+D) + T·K·D) per head:
/// inside a chunk of `chunk` rows the masked product (diagonal included), across chunks the running
/// kv_state = Σ k_jᵀ v_j (K×D) and k_sum = Σ k_j. Never builds a T×T matrix. Non-causal: one
/// kv_state over the whole sequence (chunk unused). den may be null (then it is not computed).
/// Outputs at positions ≤ t never read inputs at positions > t (bit-identical under perturbation).
/// Compile-time widths for (K, D) in {(16|32|64|128, same), (32,16), (64,32), (128,64), (16,32),
/// (16,64), (64,16)}; any other pair runs a runtime-width loop (same arithmetic, slower).
/// Per-thread scratch (reused across calls): at most 2·chunk² + 2·max(chunk, 64)·(K+D) + 2·K·D +
/// 4·K + D floats (backward), so keep chunk small: 16-128 (64 as in the reference; 16-64 measured
/// fastest at D = 64).
void linear_attention_forward(const AttentionDims& dims, bool causal, int64_t chunk, const float* q,
                              const float* k, const float* v, float* num, float* den);

/// Gradients of Σ d_num·num + Σ d_den·den. d_den may be null (den unused). dq, dk, dv are
/// OVERWRITTEN. Same chunked structure: a forward sweep for dq (kv_state), a reverse sweep for
/// dk, dv (Σ q_iᵀ d_num_i and Σ d_den_i q_i over later chunks).
void linear_attention_backward(const AttentionDims& dims, bool causal, int64_t chunk,
                               const float* q, const float* k, const float* v, const float* d_num,
                               const float* d_den, float* dq, float* dk, float* dv);

/// Trusted reference: the masked T×T form, literally, unthreaded, double accumulation.
void linear_attention_forward_naive(const AttentionDims& dims, bool causal, const float* q,
                                    const float* k, const float* v, float* num, float* den);
/// Same in double throughout (for finite-difference checks).
void linear_attention_forward_naive(const AttentionDims& dims, bool causal, const double* q,
                                    const double* k, const double* v, double* num, double* den);

/// Trusted reference gradients (literal T×T sums in double); dq, dk, dv overwritten, d_den may be
/// null.
///   dq_i = Σ_j (d_num_i·v_j + d_den_i) k_j,  dk_j = Σ_i (d_num_i·v_j + d_den_i) q_i,
///   dv_j = Σ_i (q_i·k_j) d_num_i,  over the same (i, j) pairs as the forward.
void linear_attention_backward_naive(const AttentionDims& dims, bool causal, const float* q,
                                     const float* k, const float* v, const float* d_num,
                                     const float* d_den, float* dq, float* dk, float* dv);

}  // namespace tn
