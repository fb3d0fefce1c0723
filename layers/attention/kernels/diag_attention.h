#pragma once
// Block-diagonal (local) attention, DiagAttention: paper §4, docs/model.md §7,
// transnormer_ref.py `DiagAttention.forward` (after projections, scaling and relative PE).
//
// B batch, T seq_len, H n_heads, D d_head, W block_size. q, k, v, out and gradients: [B, T, H, D];
// key_valid: [B, T] (1 = real key, 0 = padding) or null (all valid); probs: [B, H, T, W].
// Blocks are positions [s, s+W) with s a multiple of W; there is never attention across blocks.
// The last block may be partial: absent keys (index ≥ T) are masked, which equals the reference's
// zero padding with padded keys masked.
// Logits L_ij = q_i·k_j (q already scaled by 1/sqrt(D), relative PE already applied by the caller
// with period W). Masked: j > i when causal, key_valid[b*T+j] == 0, keys beyond T.
//   Relu:    A = relu(L), masked entries 0.
//   Softmax: A = softmax(L with masked = -inf); a row with every key masked gives A = 0, not NaN.
//   out_i = Σ_j A'_ij v_j, A' = A ⊙ M / (1 − p) (attention dropout, training only; the reference's
//   nn.Dropout on A). M_ij = 1 iff counter_uniform(dropout_key, idx) >= p (core/runtime/rng.h), idx =
//   ((b·H + h)·T + i)·T + j, the flat index of (b, h, i, j) in a [B, H, T, T] tensor at global
//   positions i, j: the same mask for any thread count or block size, and the same as
//   softmax_attention's for the same key. Masked entries stay 0. p = 0 (the default) is no dropout,
//   bit for bit. probs always holds the pre-dropout A; backward recomputes M from the key, so pass
//   it the forward's dropout_p and dropout_key.
// Every function throws ShapeError on negative dims, d_head < 1, block_size < 1 or dropout_p
// outside [0, 1).
#include <cstdint>

#include "layers/attention/kernels/attention_dims.h"

namespace tn {

enum class DiagInnerKind { Relu, Softmax };

/// Fast form, parallel over (batch, head, block). probs (caller buffer [B, H, T, W]) receives A:
/// row i's entries for the keys of its block (column j - block start), zero for masked or absent
/// keys. Save it for backward. Logits of masked keys are computed but discarded, so their content
/// (even NaN) cannot leak.
void diag_attention_forward(const AttentionDims& dims, int64_t block_size, DiagInnerKind inner,
                            bool causal, const uint8_t* key_valid, const float* q, const float* k,
                            const float* v, float* out, float* probs, float dropout_p = 0.f,
                            uint64_t dropout_key = 0);

/// Gradients given the saved probs and d_out; dq, dk, dv are OVERWRITTEN (masked keys get 0).
/// dA = M/(1 − p) ⊙ (d_out vᵀ) (dA = d_out vᵀ without dropout).
/// Relu: dL = dA where A > 0 (ReLU'(0) = 0). Softmax: dL = A ⊙ (dA - Σ A dA).
void diag_attention_backward(const AttentionDims& dims, int64_t block_size, DiagInnerKind inner,
                             bool causal, const uint8_t* key_valid, const float* q, const float* k,
                             const float* v, const float* probs, const float* d_out, float* dq,
                             float* dk, float* dv, float dropout_p = 0.f,
                             uint64_t dropout_key = 0);

/// Trusted reference: literal per-block loops in double, as the reference does it (pad to a
/// multiple of W with zero rows, W×W logits per block, mask, relu/softmax, dropout, A' V, drop
/// padded rows). Writes out.
void diag_attention_forward_naive(const AttentionDims& dims, int64_t block_size,
                                  DiagInnerKind inner, bool causal, const uint8_t* key_valid,
                                  const float* q, const float* k, const float* v, float* out,
                                  float dropout_p = 0.f, uint64_t dropout_key = 0);
/// Same in double throughout (for finite-difference checks).
void diag_attention_forward_naive(const AttentionDims& dims, int64_t block_size,
                                  DiagInnerKind inner, bool causal, const uint8_t* key_valid,
                                  const double* q, const double* k, const double* v, double* out,
                                  float dropout_p = 0.f, uint64_t dropout_key = 0);

/// Trusted reference gradients in double (recomputes A; literal per-block loops); dq, dk, dv
/// overwritten.
void diag_attention_backward_naive(const AttentionDims& dims, int64_t block_size,
                                   DiagInnerKind inner, bool causal, const uint8_t* key_valid,
                                   const float* q, const float* k, const float* v,
                                   const float* d_out, float* dq, float* dk, float* dv,
                                   float dropout_p = 0.f, uint64_t dropout_key = 0);

}  // namespace tn
