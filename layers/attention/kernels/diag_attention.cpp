// DiagAttention: public wrappers over the block engine (block_attention.cpp) and the naive
// reference. Legend: B batch, T seq_len, H n_heads, D d_head, W block_size.
#include "layers/attention/kernels/diag_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/runtime/rng.h"
#include "layers/attention/kernels/block_attention.h"
#include "layers/attention/kernels/kernel_utils.h"

namespace tn {
namespace {

void check_args(const char* op, const AttentionDims& dims, int64_t block_size, const void* q,
                const void* k, const void* v, float dropout_p) {
  check_attention_dims(op, dims);
  kernel_detail::check_at_least(op, "block_size", block_size, 1);
  kernel_detail::check_dropout_p(op, dropout_p);
  if (attention_numel(dims) == 0) return;
  kernel_detail::check_not_null(op, "q", q);
  kernel_detail::check_not_null(op, "k", k);
  kernel_detail::check_not_null(op, "v", v);
}

/// The reference's computation for one (b, h, block) in double: zero-padded W×D blocks, W×W logits,
/// the mask (future keys when causal, padded keys, key_valid == 0), relu or softmax. Fills A [W][W]
/// (pre-dropout), the dropout weights Dw [W][W] (A' = A ⊙ Dw) and the padded blocks Q, K, V [W][D].
/// Returns the number of real rows in the block.
template <class Real>
int64_t naive_block_probs(const AttentionDims& dims, int64_t W, DiagInnerKind inner, bool causal,
                          const uint8_t* key_valid, const Real* q, const Real* k, const Real* v,
                          int64_t b, int64_t h, int64_t blk, std::vector<double>& Q,
                          std::vector<double>& K, std::vector<double>& V, std::vector<double>& L,
                          std::vector<char>& masked, std::vector<double>& A, float dropout_p,
                          uint64_t dropout_key, std::vector<double>& Dw) {
  const int64_t T = dims.seq_len, H = dims.n_heads, D = dims.d_head;
  const int64_t s0 = blk * W;
  std::fill(Q.begin(), Q.end(), 0.0);
  std::fill(K.begin(), K.end(), 0.0);
  std::fill(V.begin(), V.end(), 0.0);
  for (int64_t r = 0; r < W && s0 + r < T; ++r)
    for (int64_t d = 0; d < D; ++d) {
      const int64_t src = ((b * T + s0 + r) * H + h) * D + d;
      Q[r * D + d] = double(q[src]);
      K[r * D + d] = double(k[src]);
      V[r * D + d] = double(v[src]);
    }
  for (int64_t i = 0; i < W; ++i)
    for (int64_t j = 0; j < W; ++j) {
      double s = 0.0;
      for (int64_t d = 0; d < D; ++d) s += Q[i * D + d] * K[j * D + d];
      L[i * W + j] = s;
      const int64_t key = s0 + j;
      masked[i * W + j] =
          (key >= T) || (causal && j > i) || (key_valid && key_valid[b * T + key] == 0);
    }
  for (int64_t i = 0; i < W; ++i) {
    double* a = &A[i * W];
    const double* l = &L[i * W];
    const char* m = &masked[i * W];
    if (inner == DiagInnerKind::Relu) {
      for (int64_t j = 0; j < W; ++j) a[j] = m[j] ? 0.0 : std::max(l[j], 0.0);
    } else {
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < W; ++j)
        if (!m[j]) mx = std::max(mx, l[j]);
      double sum = 0.0;
      for (int64_t j = 0; j < W; ++j) {
        a[j] = m[j] ? 0.0 : std::exp(l[j] - mx);
        sum += a[j];
      }
      for (int64_t j = 0; j < W; ++j) a[j] = sum > 0.0 ? a[j] / sum : 0.0;  // all masked: A = 0
    }
  }
  // Dropout weights Dw = M / (1 − p) for the real (query, key) pairs; 1 without dropout, 0 where
  // either index is beyond T (those entries are masked or dropped rows anyway).
  const double keep_weight = 1.0 / (1.0 - double(dropout_p));
  for (int64_t i = 0; i < W; ++i)
    for (int64_t j = 0; j < W; ++j) {
      const int64_t qi = s0 + i, kj = s0 + j;
      double w = 1.0;
      if (dropout_p > 0.f) {
        if (qi >= T || kj >= T) {
          w = 0.0;
        } else {
          const uint64_t idx = uint64_t(((b * H + h) * T + qi) * T + kj);
          w = counter_uniform(dropout_key, idx) < dropout_p ? 0.0 : keep_weight;
        }
      }
      Dw[i * W + j] = w;
    }
  return std::min(W, T - s0);
}

template <class Real>
void forward_naive(const AttentionDims& dims, int64_t W, DiagInnerKind inner, bool causal,
                   const uint8_t* key_valid, const Real* q, const Real* k, const Real* v, Real* out,
                   float dropout_p, uint64_t dropout_key) {
  const int64_t T = dims.seq_len, H = dims.n_heads, D = dims.d_head;
  const int64_t n_blocks = (T + W - 1) / W;
  std::vector<double> Q(W * D), K(W * D), V(W * D), L(W * W), A(W * W), Dw(W * W);
  std::vector<char> masked(W * W);
  for (int64_t b = 0; b < dims.batch; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t blk = 0; blk < n_blocks; ++blk) {
        const int64_t n = naive_block_probs(dims, W, inner, causal, key_valid, q, k, v, b, h, blk,
                                            Q, K, V, L, masked, A, dropout_p, dropout_key, Dw);
        for (int64_t i = 0; i < n; ++i)
          for (int64_t e = 0; e < D; ++e) {
            double o = 0.0;
            for (int64_t j = 0; j < W; ++j) o += A[i * W + j] * Dw[i * W + j] * V[j * D + e];
            out[((b * T + blk * W + i) * H + h) * D + e] = Real(o);
          }
      }
}

}  // namespace

void diag_attention_forward(const AttentionDims& dims, int64_t block_size, DiagInnerKind inner,
                            bool causal, const uint8_t* key_valid, const float* q, const float* k,
                            const float* v, float* out, float* probs, float dropout_p,
                            uint64_t dropout_key) {
  check_args("diag_attention_forward", dims, block_size, q, k, v, dropout_p);
  kernel_detail::block_attention_forward(dims, block_size, inner, causal, key_valid, q, k, v, out,
                                         probs, dropout_p, dropout_key);
}

void diag_attention_backward(const AttentionDims& dims, int64_t block_size, DiagInnerKind inner,
                             bool causal, const uint8_t* key_valid, const float* q, const float* k,
                             const float* v, const float* probs, const float* d_out, float* dq,
                             float* dk, float* dv, float dropout_p, uint64_t dropout_key) {
  check_args("diag_attention_backward", dims, block_size, q, k, v, dropout_p);
  kernel_detail::block_attention_backward(dims, block_size, inner, causal, key_valid, q, k, v,
                                          probs, d_out, dq, dk, dv, dropout_p, dropout_key);
}

void diag_attention_forward_naive(const AttentionDims& dims, int64_t block_size,
                                  DiagInnerKind inner, bool causal, const uint8_t* key_valid,
                                  const float* q, const float* k, const float* v, float* out,
                                  float dropout_p, uint64_t dropout_key) {
  check_args("diag_attention_forward_naive", dims, block_size, q, k, v, dropout_p);
  forward_naive(dims, block_size, inner, causal, key_valid, q, k, v, out, dropout_p, dropout_key);
}

void diag_attention_forward_naive(const AttentionDims& dims, int64_t block_size,
                                  DiagInnerKind inner, bool causal, const uint8_t* key_valid,
                                  const double* q, const double* k, const double* v, double* out,
                                  float dropout_p, uint64_t dropout_key) {
  check_args("diag_attention_forward_naive", dims, block_size, q, k, v, dropout_p);
  forward_naive(dims, block_size, inner, causal, key_valid, q, k, v, out, dropout_p, dropout_key);
}

void diag_attention_backward_naive(const AttentionDims& dims, int64_t block_size,
                                   DiagInnerKind inner, bool causal, const uint8_t* key_valid,
                                   const float* q, const float* k, const float* v,
                                   const float* d_out, float* dq, float* dk, float* dv,
                                   float dropout_p, uint64_t dropout_key) {
  check_args("diag_attention_backward_naive", dims, block_size, q, k, v, dropout_p);
  const int64_t T = dims.seq_len, H = dims.n_heads, D = dims.d_head, W = block_size;
  const int64_t n_blocks = (T + W - 1) / W;
  std::vector<double> Q(W * D), K(W * D), V(W * D), L(W * W), A(W * W), Dw(W * W), dL(W * W),
      G(W * D);
  std::vector<char> masked(W * W);
  for (int64_t b = 0; b < dims.batch; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t blk = 0; blk < n_blocks; ++blk) {
        const int64_t n = naive_block_probs(dims, W, inner, causal, key_valid, q, k, v, b, h, blk,
                                            Q, K, V, L, masked, A, dropout_p, dropout_key, Dw);
        auto row = [&](int64_t r) { return ((b * T + blk * W + r) * H + h) * D; };
        std::fill(G.begin(), G.end(), 0.0);  // d_out of padded rows is 0 (they are dropped)
        for (int64_t i = 0; i < n; ++i)
          for (int64_t d = 0; d < D; ++d) G[i * D + d] = double(d_out[row(i) + d]);
        for (int64_t i = 0; i < W; ++i) {
          double c = 0.0;
          for (int64_t j = 0; j < W; ++j) {
            double dA = 0.0;
            for (int64_t d = 0; d < D; ++d) dA += G[i * D + d] * V[j * D + d];
            dA *= Dw[i * W + j];  // d(A ⊙ Dw)/dA
            dL[i * W + j] = dA;
            c += A[i * W + j] * dA;
          }
          for (int64_t j = 0; j < W; ++j) {
            const bool m = masked[i * W + j];
            dL[i * W + j] = inner == DiagInnerKind::Relu
                                ? ((!m && L[i * W + j] > 0.0) ? dL[i * W + j] : 0.0)
                                : A[i * W + j] * (dL[i * W + j] - c);
          }
        }
        for (int64_t r = 0; r < n; ++r)
          for (int64_t d = 0; d < D; ++d) {
            double gq = 0.0, gk = 0.0, gv = 0.0;
            for (int64_t o = 0; o < W; ++o) {
              gq += dL[r * W + o] * K[o * D + d];
              gk += dL[o * W + r] * Q[o * D + d];
              gv += A[o * W + r] * Dw[o * W + r] * G[o * D + d];
            }
            dq[row(r) + d] = float(gq);
            dk[row(r) + d] = float(gk);
            dv[row(r) + d] = float(gv);
          }
      }
}

}  // namespace tn
