#pragma once
// cosFormer re-weighting (docs/model.md §8; M = the sequence's own length),
// transnormer_ref.py `CosformerAttention.forward`. The output feeds linear_attention with
// d_key = 2·d_head; relative PE is never applied.
//
// B batch, T seq_len, H n_heads, D d_head. x, dx: [B, T, H, D]; y, dy: [B, T, H, 2·D];
// lengths: [B] real length M_b of each sequence (null: M_b = T for every b).
// For each head, at 1-based position i = t + 1 of sequence b, with a_i = (π/2)·i / M_b:
//
//   y[b, t, h, 0:D]  = relu(x[b, t, h]) · sin a_i        (the sin half first)
//   y[b, t, h, D:2D] = relu(x[b, t, h]) · cos a_i
//
// Rows t >= M_b (padding) give 0 (and dx 0), so a sequence's real rows never depend on how much
// padding it got. ReLU'(0) = 0. The angle is computed in double and rounded to f32 before sin/cos,
// as the reference does in float32 mode. M is the sequence's own length, so outputs depend on T.
// dims.d_key must be 0 or 2·d_head (the dims passed to linear_attention can be reused).
// Every function throws ShapeError on bad dims, lengths outside [0, T] or a null required pointer.
#include <cstdint>

#include "layers/attention/kernels/attention_dims.h"

namespace tn {

/// Fast form (f32, parallel over rows). y is written in full.
void cosformer_features_forward(const AttentionDims& dims, const int64_t* lengths, const float* x,
                                float* y);

/// dx (OVERWRITTEN) = gradient of Σ dy·y: dx = [x > 0]·(dy_sin·sin a_i + dy_cos·cos a_i).
void cosformer_features_backward(const AttentionDims& dims, const int64_t* lengths, const float* x,
                                 const float* dy, float* dx);

/// Trusted reference in double (angle and trigonometry in double), literally, unthreaded.
void cosformer_features_forward_naive(const AttentionDims& dims, const int64_t* lengths,
                                      const double* x, double* y);

/// Trusted reference gradient in double; dx overwritten.
void cosformer_features_backward_naive(const AttentionDims& dims, const int64_t* lengths,
                                       const double* x, const double* dy, double* dx);

}  // namespace tn
