#pragma once
// Performer (FAVOR+) positive random features: docs/model.md §8 (decoder keys: stabiliser 0),
// transnormer_ref.py `PerformerAttention.feature_map` and `orthogonal_features`. The
// features feed linear_attention with d_key = m; relative PE is never applied.
//
// B batch, T seq_len, H n_heads, D d_head, M = m features. x, dx: [B, T, H, D]; phi, d_phi:
// [B, T, H, M]; features w: [H, M, D] (a fixed buffer, no gradient); stabiliser: [B, T, H];
// key_valid: [B, T] (1 real, 0 padding; null: every position real). With c = D^(-1/4):
//
//   phi(x)_r = M^(-1/2) · exp((c x)·w_r − c²‖x‖²/2 − s) + feature_eps        (r = 0..M-1)
//
// s is a constant for autograd (the reference detaches it):
//   queries (is_query):       s = max_r (c x)·w_r of the same row;
//   keys, !causal (encoder):  s = max over r and over every real position t of the (b, h);
//   keys, causal (decoder):   s = 0 (a sequence-wide max would let later tokens change earlier
//                             outputs through feature_eps).
// Padded keys (key_valid 0, encoder only) are left out of the shared max, so padding never changes
// the features of real keys (bit for bit). A padded key row itself uses its own row max (as a query
// does), which keeps it finite; the caller zeroes padded key rows before the attention sums.
// key_valid is ignored for queries and for causal keys.
//
// dims.d_key must be 0 or M, so the dims passed to linear_attention (d_key = M) can be reused.
// Every function throws ShapeError on bad dims, m < 1 or a null required pointer.
#include <cstdint>
#include <vector>

#include "layers/attention/kernels/attention_dims.h"

namespace tn {

/// Fast form (f32, parallel over rows; over (b, h) for encoder keys). phi and stabiliser are
/// written in full; stabiliser receives the s used per row (for encoder keys the shared value,
/// repeated on every real row of the (b, h)) so backward and finite-difference checks can hold it
/// fixed. Deterministic: the same bits for any thread count.
void performer_features_forward(const AttentionDims& dims, int64_t m, const float* features,
                                bool is_query, bool causal, const uint8_t* key_valid,
                                double feature_eps, const float* x, float* phi, float* stabiliser);

/// dx (OVERWRITTEN) = gradient of Σ d_phi·phi with the stabiliser held constant, from the forward
/// output phi: d phi_r / dx = (phi_r − feature_eps)·(c w_r − c² x).
void performer_features_backward(const AttentionDims& dims, int64_t m, const float* features,
                                 const float* x, const float* phi, double feature_eps,
                                 const float* d_phi, float* dx);

/// Trusted reference in double: computes the stabiliser by the rules above (written to
/// `stabiliser`), then phi, literally, unthreaded.
void performer_features_forward_naive(const AttentionDims& dims, int64_t m, const float* features,
                                      bool is_query, bool causal, const uint8_t* key_valid,
                                      double feature_eps, const double* x, double* phi,
                                      double* stabiliser);

/// phi for a given stabiliser [B, T, H] (the function autograd differentiates; used for finite
/// differences).
void performer_features_fixed_naive(const AttentionDims& dims, int64_t m, const float* features,
                                    double feature_eps, const double* x, const double* stabiliser,
                                    double* phi);

/// Trusted reference gradient in double for a given stabiliser, from the formula
/// dx = Σ_r d_phi_r · M^(-1/2) exp(u_r) · (c w_r − c² x), u_r the exponent above. dx overwritten.
void performer_features_backward_naive(const AttentionDims& dims, int64_t m, const float* features,
                                       const double* x, const double* stabiliser,
                                       const double* d_phi, double* dx);

/// Orthogonal Gaussian random features [n_heads, m, d_head] (float), drawn from tn::Rng(seed) in
/// the reference's order and construction (`orthogonal_features`): per head, ceil(m / d_head)
/// blocks, each the transposed Q of the QR factorisation of a d_head×d_head standard Gaussian
/// matrix (rows orthonormal, LAPACK sign conventions as torch.linalg.qr), stacked and cut to m
/// rows; then row r is scaled by the norm of a fresh d_head-dimensional Gaussian vector (all m
/// norms drawn after the head's blocks). Same distribution as the reference; the draws differ
/// (another RNG).
std::vector<float> performer_orthogonal_features(int64_t n_heads, int64_t m, int64_t d_head,
                                                 uint64_t seed);

/// Q of A = QR for a square n×n row-major matrix a, by Householder reflections with LAPACK's
/// conventions (dgeqr2/dlarfg: R_ii = −sign(α)·‖column‖, no reflection for an empty or zero
/// sub-column, so R_nn keeps its sign; Q = H_0·H_1···H_{n-1} as dorg2r). Matches torch.linalg.qr
/// (and numpy.linalg.qr) up to rounding, column signs included. q: n×n row-major.
void householder_qr_q(int64_t n, const double* a, double* q);

}  // namespace tn
