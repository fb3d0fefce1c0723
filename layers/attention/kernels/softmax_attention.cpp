// Vanilla softmax attention: the fast form is the sgemm engine of full_attention.cpp; the naive
// reference is the literal masked T×T computation. Legend: B batch, T seq_len, H n_heads, D d_head.
#include "layers/attention/kernels/softmax_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/runtime/rng.h"
#include "layers/attention/kernels/block_attention.h"
#include "layers/attention/kernels/full_attention.h"
#include "layers/attention/kernels/kernel_utils.h"

namespace tn {
namespace {

void check_args(const char* op, const AttentionDims& dims, const void* q, const void* k,
                const void* v, float dropout_p) {
  check_attention_dims(op, dims);
  kernel_detail::check_dropout_p(op, dropout_p);
  if (attention_numel(dims) == 0) return;
  kernel_detail::check_not_null(op, "q", q);
  kernel_detail::check_not_null(op, "k", k);
  kernel_detail::check_not_null(op, "v", v);
}

/// P [T][T] for one (b, h) in double: logits q_i·k_j, -inf where masked, softmax per row,
/// all-masked row 0.
template <class Real>
void naive_probs(const AttentionDims& dims, bool causal, const uint8_t* key_valid, const Real* q,
                 const Real* k, int64_t b, int64_t h, std::vector<double>& P) {
  const int64_t T = dims.seq_len, H = dims.n_heads, D = dims.d_head;
  const double neg_inf = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < T; ++i) {
    double* p = &P[i * T];
    double mx = neg_inf;
    for (int64_t j = 0; j < T; ++j) {
      double s = 0.0;
      for (int64_t d = 0; d < D; ++d)
        s += double(q[((b * T + i) * H + h) * D + d]) * double(k[((b * T + j) * H + h) * D + d]);
      const bool masked = (causal && j > i) || (key_valid && key_valid[b * T + j] == 0);
      p[j] = masked ? neg_inf : s;
      mx = std::max(mx, p[j]);
    }
    if (mx == neg_inf) {
      std::fill(p, p + T, 0.0);
      continue;
    }
    double sum = 0.0;
    for (int64_t j = 0; j < T; ++j) {
      p[j] = std::exp(p[j] - mx);  // exp(-inf) = 0
      sum += p[j];
    }
    for (int64_t j = 0; j < T; ++j) p[j] /= sum;
  }
}

/// Dropout weights M / (1 − p) of one (b, h) [T][T] in double (all 1 when p = 0).
void naive_dropout_weights(const AttentionDims& dims, float dropout_p, uint64_t dropout_key,
                           int64_t b, int64_t h, std::vector<double>& Dw) {
  const int64_t T = dims.seq_len, H = dims.n_heads;
  const double keep_weight = 1.0 / (1.0 - double(dropout_p));
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < T; ++j) {
      double w = 1.0;
      if (dropout_p > 0.f) {
        const uint64_t idx = uint64_t(((b * H + h) * T + i) * T + j);
        w = counter_uniform(dropout_key, idx) < dropout_p ? 0.0 : keep_weight;
      }
      Dw[i * T + j] = w;
    }
}

template <class Real>
void forward_naive(const AttentionDims& dims, bool causal, const uint8_t* key_valid, const Real* q,
                   const Real* k, const Real* v, Real* out, float dropout_p,
                   uint64_t dropout_key) {
  const int64_t T = dims.seq_len, H = dims.n_heads, D = dims.d_head;
  std::vector<double> P(T * T), Dw(T * T);
  for (int64_t b = 0; b < dims.batch; ++b)
    for (int64_t h = 0; h < H; ++h) {
      naive_probs(dims, causal, key_valid, q, k, b, h, P);
      naive_dropout_weights(dims, dropout_p, dropout_key, b, h, Dw);
      for (int64_t i = 0; i < T; ++i)
        for (int64_t e = 0; e < D; ++e) {
          double o = 0.0;
          for (int64_t j = 0; j < T; ++j)
            o += P[i * T + j] * Dw[i * T + j] * double(v[((b * T + j) * H + h) * D + e]);
          out[((b * T + i) * H + h) * D + e] = Real(o);
        }
    }
}

}  // namespace

void softmax_attention_forward(const AttentionDims& dims, bool causal, const uint8_t* key_valid,
                               const float* q, const float* k, const float* v, float* out,
                               float* stats, float dropout_p, uint64_t dropout_key) {
  check_args("softmax_attention_forward", dims, q, k, v, dropout_p);
  if (attention_numel(dims) > 0)
    kernel_detail::check_not_null("softmax_attention_forward", "stats", stats);
  kernel_detail::full_attention_forward(dims, causal, key_valid, q, k, v, out, stats, dropout_p,
                                        dropout_key);
}

void softmax_attention_backward(const AttentionDims& dims, bool causal, const uint8_t* key_valid,
                                const float* q, const float* k, const float* v, const float* stats,
                                const float* d_out, float* dq, float* dk, float* dv,
                                float dropout_p, uint64_t dropout_key) {
  check_args("softmax_attention_backward", dims, q, k, v, dropout_p);
  if (attention_numel(dims) > 0)
    kernel_detail::check_not_null("softmax_attention_backward", "stats", stats);
  kernel_detail::full_attention_backward(dims, causal, key_valid, q, k, v, stats, d_out, dq, dk,
                                         dv, dropout_p, dropout_key);
}

void softmax_attention_forward_naive(const AttentionDims& dims, bool causal,
                                     const uint8_t* key_valid, const float* q, const float* k,
                                     const float* v, float* out, float dropout_p,
                                     uint64_t dropout_key) {
  check_args("softmax_attention_forward_naive", dims, q, k, v, dropout_p);
  forward_naive(dims, causal, key_valid, q, k, v, out, dropout_p, dropout_key);
}

void softmax_attention_forward_naive(const AttentionDims& dims, bool causal,
                                     const uint8_t* key_valid, const double* q, const double* k,
                                     const double* v, double* out, float dropout_p,
                                     uint64_t dropout_key) {
  check_args("softmax_attention_forward_naive", dims, q, k, v, dropout_p);
  forward_naive(dims, causal, key_valid, q, k, v, out, dropout_p, dropout_key);
}

void softmax_attention_backward_naive(const AttentionDims& dims, bool causal,
                                      const uint8_t* key_valid, const float* q, const float* k,
                                      const float* v, const float* d_out, float* dq, float* dk,
                                      float* dv, float dropout_p, uint64_t dropout_key) {
  check_args("softmax_attention_backward_naive", dims, q, k, v, dropout_p);
  const int64_t T = dims.seq_len, H = dims.n_heads, D = dims.d_head;
  std::vector<double> P(T * T), Dw(T * T), dS(T * T);
  auto at = [&](int64_t b, int64_t t, int64_t h) { return ((b * T + t) * H + h) * D; };
  for (int64_t b = 0; b < dims.batch; ++b)
    for (int64_t h = 0; h < H; ++h) {
      naive_probs(dims, causal, key_valid, q, k, b, h, P);
      naive_dropout_weights(dims, dropout_p, dropout_key, b, h, Dw);
      for (int64_t i = 0; i < T; ++i) {
        double c = 0.0;
        for (int64_t j = 0; j < T; ++j) {
          double dP = 0.0;
          for (int64_t d = 0; d < D; ++d)
            dP += double(d_out[at(b, i, h) + d]) * double(v[at(b, j, h) + d]);
          dP *= Dw[i * T + j];  // d(P ⊙ Dw)/dP
          dS[i * T + j] = dP;
          c += P[i * T + j] * dP;
        }
        for (int64_t j = 0; j < T; ++j) dS[i * T + j] = P[i * T + j] * (dS[i * T + j] - c);
      }
      for (int64_t r = 0; r < T; ++r)
        for (int64_t d = 0; d < D; ++d) {
          double gq = 0.0, gk = 0.0, gv = 0.0;
          for (int64_t o = 0; o < T; ++o) {
            gq += dS[r * T + o] * double(k[at(b, o, h) + d]);
            gk += dS[o * T + r] * double(q[at(b, o, h) + d]);
            gv += P[o * T + r] * Dw[o * T + r] * double(d_out[at(b, o, h) + d]);
          }
          dq[at(b, r, h) + d] = float(gq);
          dk[at(b, r, h) + d] = float(gk);
          dv[at(b, r, h) + d] = float(gv);
        }
    }
}

}  // namespace tn
