// Linear attention kernels: chunked causal / global non-causal fast forms and the T×T naive
// reference. Legend: B batch, T seq_len, H n_heads, D d_head, C chunk. Rows of one (b, h) are
// `stride` = H·D apart.
#include "layers/attention/kernels/linear_attention.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "layers/attention/kernels/kernel_utils.h"

namespace tn {
namespace {

using kernel_detail::dot;
using kernel_detail::fill_zero;
using kernel_detail::gather_rows;
using kernel_detail::row_dots;
using kernel_detail::RowAcc;

/// One (b, h): pointers at its row 0; den (may be null) at its [b, 0, h] entry with stride H.
struct HeadPtrs {
  const float* q;
  const float* k;
  const float* v;
  int64_t stride;      // H·D between consecutive positions
  int64_t den_stride;  // H
};

constexpr int64_t kNonCausalBlock = 64;  // rows gathered at once by the non-causal forms

template <int kD>
void forward_head(const HeadPtrs& p, int64_t T, int64_t d_head, bool causal, int64_t C,
                  float* __restrict num, float* __restrict den, float* __restrict scratch) {
  const int64_t D = kD > 0 ? kD : d_head;
  const int64_t st = p.stride;
  float* __restrict state =
      scratch;  // [D][D]: Σ k_jᵀ v_j over earlier chunks (all of T when non-causal)
  float* __restrict k_sum = state + D * D;  // [D]
  float* __restrict S = k_sum + D;          // [C][C]: masked intra-chunk q_i·k_j
  const int64_t rows = std::max(C, kNonCausalBlock);
  float* __restrict qc = S + C * C;  // [rows][D] gathered chunk rows
  float* __restrict kc = qc + rows * D;
  float* __restrict vc = kc + rows * D;
  RowAcc<kD> acc(vc + rows * D, D);  // one row being accumulated (scratch [D] when kD == 0)
  fill_zero(state, D * D);
  fill_zero(k_sum, D);
  // state[d] += Σ_{j < n} kc_j[d] vc_j, one state row at a time (kept in registers across j).
  auto add_to_state = [&](int64_t n) {
    for (int64_t d = 0; d < D; ++d) {
      acc.load(state + d * D);
      for (int64_t j = 0; j < n; ++j) acc.add(kc[j * D + d], vc + j * D);
      acc.store(state + d * D);
    }
    if (den) {
      acc.load(k_sum);
      for (int64_t j = 0; j < n; ++j) acc.add(1.f, kc + j * D);
      acc.store(k_sum);
    }
  };
  auto state_term = [&](const float* qi) {  // acc = q_i · state
    acc.zero();
    for (int64_t d = 0; d < D; ++d) acc.add(qi[d], state + d * D);
  };

  if (!causal) {
    for (int64_t c0 = 0; c0 < T; c0 += kNonCausalBlock) {
      const int64_t n = std::min(kNonCausalBlock, T - c0);
      gather_rows(p.k + c0 * st, st, n, D, kc);
      gather_rows(p.v + c0 * st, st, n, D, vc);
      add_to_state(n);
    }
    for (int64_t i = 0; i < T; ++i) {
      const float* qi = p.q + i * st;
      state_term(qi);
      acc.store(num + i * st);
      if (den) den[i * p.den_stride] = dot(qi, k_sum, D);
    }
    return;
  }

  for (int64_t c0 = 0; c0 < T; c0 += C) {
    const int64_t n = std::min(C, T - c0);
    gather_rows(p.q + c0 * st, st, n, D, qc);
    gather_rows(p.k + c0 * st, st, n, D, kc);
    gather_rows(p.v + c0 * st, st, n, D, vc);
    for (int64_t i = 0; i < n; ++i) row_dots(qc + i * D, kc, D, i + 1, D, S + i * C);
    for (int64_t i = 0; i < n; ++i) {
      const float* qi = qc + i * D;
      state_term(qi);
      for (int64_t j = 0; j <= i; ++j) acc.add(S[i * C + j], vc + j * D);
      acc.store(num + (c0 + i) * st);
      if (den) {
        float s = dot(qi, k_sum, D);
        for (int64_t j = 0; j <= i; ++j) s += S[i * C + j];
        den[(c0 + i) * p.den_stride] = s;
      }
    }
    add_to_state(n);
  }
}

// Gradients of Σ g_i·num_i + gd_i·den_i with g = d_num, gd = d_den (0 when null):
//   dq_i = Σ_j G_ij k_j,  dk_j = Σ_i G_ij q_i,  dv_j = Σ_i S_ij g_i,  G_ij = g_i·v_j + gd_i, S_ij =
//   q_i·k_j.
template <int kD>
void backward_head(const HeadPtrs& p, int64_t T, int64_t d_head, bool causal, int64_t C,
                   const float* __restrict d_num, const float* __restrict d_den,
                   float* __restrict dq, float* __restrict dk, float* __restrict dv,
                   float* __restrict scratch) {
  const int64_t D = kD > 0 ? kD : d_head;
  const int64_t st = p.stride;
  float* __restrict state_t = scratch;        // [D(e)][D(d)]: Σ v_j[e] k_j[d] over earlier keys
  float* __restrict k_sum = state_t + D * D;  // [D]
  float* __restrict R = k_sum + D;            // [D(d)][D(e)]: Σ q_i[d] g_i[e] over later queries
  float* __restrict qd_sum = R + D * D;       // [D]: Σ gd_i q_i over later queries
  float* __restrict dk_row = qd_sum + D;      // [D]: R·v_j
  float* __restrict S = dk_row + D;           // [C][C]
  float* __restrict G = S + C * C;            // [C][C]
  const int64_t rows = std::max(C, kNonCausalBlock);
  float* __restrict qc = G + C * C;  // [rows][D] gathered chunk rows of q, k, v, d_num
  float* __restrict kc = qc + rows * D;
  float* __restrict vc = kc + rows * D;
  float* __restrict gc = vc + rows * D;
  RowAcc<kD> acc(gc + rows * D, D);  // one row being accumulated (scratch [D] when kD == 0)
  auto gd = [&](int64_t i) { return d_den ? d_den[i * p.den_stride] : 0.f; };
  auto gather = [&](int64_t c0, int64_t n) {
    gather_rows(p.q + c0 * st, st, n, D, qc);
    gather_rows(p.k + c0 * st, st, n, D, kc);
    gather_rows(p.v + c0 * st, st, n, D, vc);
    gather_rows(d_num + c0 * st, st, n, D, gc);
  };
  // x[r] += Σ_{t < n} a_t[r] b_t for the D rows r of a D×D matrix x, row by row in registers.
  auto rank_update = [&](float* x, const float* a, const float* b, int64_t n) {
    for (int64_t r = 0; r < D; ++r) {
      acc.load(x + r * D);
      for (int64_t t = 0; t < n; ++t) acc.add(a[t * D + r], b + t * D);
      acc.store(x + r * D);
    }
  };
  auto add_state =
      [&](int64_t n) {  // state_t += Σ v_jᵀ k_j, k_sum += Σ k_j over the gathered chunk
        rank_update(state_t, vc, kc, n);
        if (!d_den) return;
        acc.load(k_sum);
        for (int64_t j = 0; j < n; ++j) acc.add(1.f, kc + j * D);
        acc.store(k_sum);
      };
  auto add_reverse_state = [&](int64_t c0, int64_t n) {  // R += Σ q_iᵀ g_i, qd_sum += Σ gd_i q_i
    rank_update(R, qc, gc, n);
    if (!d_den) return;
    acc.load(qd_sum);
    for (int64_t i = 0; i < n; ++i) acc.add(gd(c0 + i), qc + i * D);
    acc.store(qd_sum);
  };
  auto dq_state_term = [&](const float* gi,
                           float gdi) {  // acc = Σ_e g_i[e] state_t[e] + gd_i k_sum
    acc.zero();
    for (int64_t e = 0; e < D; ++e) acc.add(gi[e], state_t + e * D);
    if (d_den) acc.add(gdi, k_sum);
  };
  // dk_j (+)= R v_j + qd_sum (D dot products: cheaper than keeping Rᵀ up to date);  dv_j (+)= Σ_d
  // k_j[d] R[d].
  auto dkv_reverse_term = [&](const float* kj, const float* vj, int64_t j, bool overwrite) {
    row_dots(vj, R, D, D, D, dk_row);
    float* __restrict dkj = dk + j * st;
    if (overwrite)
      for (int64_t d = 0; d < D; ++d) dkj[d] = dk_row[d] + qd_sum[d];
    else
      for (int64_t d = 0; d < D; ++d) dkj[d] += dk_row[d] + qd_sum[d];
    acc.zero();
    for (int64_t d = 0; d < D; ++d) acc.add(kj[d], R + d * D);
    if (!overwrite) acc.add(1.f, dv + j * st);
    acc.store(dv + j * st);
  };
  fill_zero(state_t, D * D);
  fill_zero(k_sum, D);
  fill_zero(R, D * D);
  fill_zero(qd_sum, D);

  if (!causal) {
    for (int64_t c0 = 0; c0 < T; c0 += kNonCausalBlock) {
      const int64_t n = std::min(kNonCausalBlock, T - c0);
      gather(c0, n);
      add_state(n);
      add_reverse_state(c0, n);
    }
    for (int64_t i = 0; i < T; ++i) {
      dq_state_term(d_num + i * st, gd(i));
      acc.store(dq + i * st);
      dkv_reverse_term(p.k + i * st, p.v + i * st, i, true);
    }
    return;
  }

  // Forward sweep: dq (intra-chunk + state of earlier chunks), intra-chunk parts of dk and dv.
  for (int64_t c0 = 0; c0 < T; c0 += C) {
    const int64_t n = std::min(C, T - c0);
    gather(c0, n);
    for (int64_t i = 0; i < n; ++i) {
      row_dots(qc + i * D, kc, D, i + 1, D, S + i * C);
      row_dots(gc + i * D, vc, D, i + 1, D, G + i * C);
      const float gdi = gd(c0 + i);
      for (int64_t j = 0; j <= i; ++j) G[i * C + j] += gdi;
    }
    for (int64_t i = 0; i < n; ++i) {
      dq_state_term(gc + i * D, gd(c0 + i));
      for (int64_t j = 0; j <= i; ++j) acc.add(G[i * C + j], kc + j * D);
      acc.store(dq + (c0 + i) * st);
    }
    for (int64_t j = 0; j < n; ++j) {
      acc.zero();
      for (int64_t i = j; i < n; ++i) acc.add(G[i * C + j], qc + i * D);
      acc.store(dk + (c0 + j) * st);
      acc.zero();
      for (int64_t i = j; i < n; ++i) acc.add(S[i * C + j], gc + i * D);
      acc.store(dv + (c0 + j) * st);
    }
    add_state(n);
  }
  // Reverse sweep: dk, dv from the queries of later chunks.
  const int64_t last = ((T - 1) / C) * C;
  for (int64_t c0 = last; c0 >= 0; c0 -= C) {
    const int64_t n = std::min(C, T - c0);
    gather(c0, n);
    if (c0 != last)
      for (int64_t j = 0; j < n; ++j) dkv_reverse_term(kc + j * D, vc + j * D, c0 + j, false);
    add_reverse_state(c0, n);
  }
}

void check_args(const char* op, const AttentionDims& dims, int64_t chunk, const void* q,
                const void* k, const void* v) {
  check_attention_dims(op, dims);
  kernel_detail::check_at_least(op, "chunk", chunk, 1);
  if (attention_numel(dims) == 0) return;
  kernel_detail::check_not_null(op, "q", q);
  kernel_detail::check_not_null(op, "k", k);
  kernel_detail::check_not_null(op, "v", v);
}

// ---- naive reference
// -------------------------------------------------------------------------------------

template <class Real>
void forward_naive(const AttentionDims& dims, bool causal, const Real* q, const Real* k,
                   const Real* v, Real* num, Real* den) {
  const int64_t T = dims.seq_len, H = dims.n_heads, D = dims.d_head;
  auto at = [&](int64_t b, int64_t t, int64_t h) { return ((b * T + t) * H + h) * D; };
  std::vector<double> acc(D);
  for (int64_t b = 0; b < dims.batch; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < T; ++i) {
        std::fill(acc.begin(), acc.end(), 0.0);
        double den_i = 0.0;
        for (int64_t j = 0; j < T; ++j) {
          if (causal && j > i) continue;  // masked: (q_i·k_j)·0
          double s = 0.0;
          for (int64_t d = 0; d < D; ++d)
            s += double(q[at(b, i, h) + d]) * double(k[at(b, j, h) + d]);
          for (int64_t e = 0; e < D; ++e) acc[e] += s * double(v[at(b, j, h) + e]);
          den_i += s;
        }
        for (int64_t e = 0; e < D; ++e) num[at(b, i, h) + e] = Real(acc[e]);
        if (den) den[(b * T + i) * H + h] = Real(den_i);
      }
}

}  // namespace

void linear_attention_forward(const AttentionDims& dims, bool causal, int64_t chunk, const float* q,
                              const float* k, const float* v, float* num, float* den) {
  check_args("linear_attention_forward", dims, chunk, q, k, v);
  const int64_t B = dims.batch, T = dims.seq_len, H = dims.n_heads, D = dims.d_head;
  if (B * T * H == 0) return;
  const int64_t C = std::min(chunk, T);
  const int64_t G = std::max(C, kNonCausalBlock);  // gathered rows
  const size_t scratch_floats =
      size_t(D * D + 2 * D + C * C + 3 * G * D);  // state, k_sum, row, S, q/k/v rows
  kernel_detail::dispatch_d_head(D, [&]<int kD>() {
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h) {
        const int64_t off = (b * T * H + h) * D;
        HeadPtrs p{q + off, k + off, v + off, H * D, H};
        forward_head<kD>(p, T, D, causal, C, num + off, den ? den + b * T * H + h : nullptr,
                         kernel_detail::thread_scratch(scratch_floats));
      }
  });
}

void linear_attention_backward(const AttentionDims& dims, bool causal, int64_t chunk,
                               const float* q, const float* k, const float* v, const float* d_num,
                               const float* d_den, float* dq, float* dk, float* dv) {
  check_args("linear_attention_backward", dims, chunk, q, k, v);
  const int64_t B = dims.batch, T = dims.seq_len, H = dims.n_heads, D = dims.d_head;
  if (B * T * H == 0) return;
  const int64_t C = std::min(chunk, T);
  const int64_t G = std::max(C, kNonCausalBlock);  // gathered rows
  // state_t, R; k_sum, qd_sum, dk_row, row; S, G; q/k/v/d_num rows
  const size_t scratch_floats = size_t(2 * D * D + 4 * D + 2 * C * C + 4 * G * D);
  kernel_detail::dispatch_d_head(D, [&]<int kD>() {
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h) {
        const int64_t off = (b * T * H + h) * D;
        HeadPtrs p{q + off, k + off, v + off, H * D, H};
        backward_head<kD>(p, T, D, causal, C, d_num + off, d_den ? d_den + b * T * H + h : nullptr,
                          dq + off, dk + off, dv + off,
                          kernel_detail::thread_scratch(scratch_floats));
      }
  });
}

void linear_attention_forward_naive(const AttentionDims& dims, bool causal, const float* q,
                                    const float* k, const float* v, float* num, float* den) {
  check_attention_dims("linear_attention_forward_naive", dims);
  forward_naive(dims, causal, q, k, v, num, den);
}

void linear_attention_forward_naive(const AttentionDims& dims, bool causal, const double* q,
                                    const double* k, const double* v, double* num, double* den) {
  check_attention_dims("linear_attention_forward_naive", dims);
  forward_naive(dims, causal, q, k, v, num, den);
}

void linear_attention_backward_naive(const AttentionDims& dims, bool causal, const float* q,
                                     const float* k, const float* v, const float* d_num,
                                     const float* d_den, float* dq, float* dk, float* dv) {
  check_attention_dims("linear_attention_backward_naive", dims);
  const int64_t T = dims.seq_len, H = dims.n_heads, D = dims.d_head;
  const size_t n = size_t(attention_numel(dims));
  std::vector<double> gq(n, 0.0), gk(n, 0.0), gv(n, 0.0);
  auto at = [&](int64_t b, int64_t t, int64_t h) { return ((b * T + t) * H + h) * D; };
  for (int64_t b = 0; b < dims.batch; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < T; ++i)
        for (int64_t j = 0; j < T; ++j) {
          if (causal && j > i) continue;
          const int64_t qi = at(b, i, h), kj = at(b, j, h);
          double s = 0.0, g = d_den ? double(d_den[(b * T + i) * H + h]) : 0.0;
          for (int64_t d = 0; d < D; ++d) {
            s += double(q[qi + d]) * double(k[kj + d]);
            g += double(d_num[qi + d]) * double(v[kj + d]);
          }
          for (int64_t d = 0; d < D; ++d) {
            gq[qi + d] += g * double(k[kj + d]);
            gk[kj + d] += g * double(q[qi + d]);
            gv[kj + d] += s * double(d_num[qi + d]);
          }
        }
  for (size_t i = 0; i < n; ++i) {
    dq[i] = float(gq[i]);
    dk[i] = float(gk[i]);
    dv[i] = float(gv[i]);
  }
}

}  // namespace tn
