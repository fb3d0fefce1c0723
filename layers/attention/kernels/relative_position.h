#pragma once
// URPE / RoPE relative position encoding: docs/model.md §4,
// transnormer_ref.py `Urpe`, `Rope`, `rotate_pairs`.
//
// B batch, T seq_len, H n_heads, D d_head (must be even). x, y, dx, dy: [B, T, H, D]; theta,
// d_theta: [D/2], shared by all heads; householder: [D] or null.
//   1. if householder != null: x ← x − 2 (x·v) v   (v used as stored, not renormalised)
//   2. rotate adjacent pairs (2m, 2m+1) by a = pos·theta[m]:
//        y_2m = x_2m cos a − x_2m+1 sin a,   y_2m+1 = x_2m+1 cos a + x_2m sin a
//      pos = offset + t when period == 0, else (offset + t) % period (DiagAttention blocks use
//      period = block_size). offset (default 0, >= 0) is the absolute position of row t = 0: an
//      incremental decoder encodes one row at a time at its absolute position; offset 0 is the
//      whole-sequence form, bit for bit.
// The angle is formed in float (float(pos)·theta[m], as the reference does in f32), cos/sin of it
// are then taken in double and rounded. RoPE: theta_m = 10000^(-2m/D), householder = null. Every
// function throws ShapeError on negative dims, odd d_head or period < 0.
#include <cstdint>

#include "layers/attention/kernels/attention_dims.h"

namespace tn {

/// Fast form, parallel over (batch, position) rows; cos/sin computed once per row for all heads.
/// y may not alias x.
void relative_position_forward(const AttentionDims& dims, const float* theta,
                               const float* householder, int64_t period, const float* x, float* y,
                               int64_t offset = 0);

/// dx OVERWRITTEN with (I − 2vvᵀ) Rotᵀ dy; d_theta (if not null) ACCUMULATED (+=) with
/// Σ over b, t, h of pos · (y_2m dy_2m+1 − y_2m+1 dy_2m), summed in double over fixed chunks of 64
/// (b, t) rows added in order: the same bits on any thread count, as dx.
void relative_position_backward(const AttentionDims& dims, const float* theta,
                                const float* householder, int64_t period, const float* x,
                                const float* dy, float* dx, float* d_theta, int64_t offset = 0);

/// Trusted reference: the literal formula per element in double (angle formed as the fast form
/// does).
void relative_position_forward_naive(const AttentionDims& dims, const float* theta,
                                     const float* householder, int64_t period, const float* x,
                                     float* y, int64_t offset = 0);
/// Same in double throughout, angle pos·theta in double (for finite-difference checks).
void relative_position_forward_naive(const AttentionDims& dims, const double* theta,
                                     const double* householder, int64_t period, const double* x,
                                     double* y, int64_t offset = 0);

}  // namespace tn
