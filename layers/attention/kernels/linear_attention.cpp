// Linear attention kernels: chunked causal / global non-causal fast forms and the T×T naive
// reference. Legend: B batch, T seq_len, H n_heads, K key width (q, k), D d_head (v, num),
// C chunk. Rows of one (b, h) are `key_stride` = H·K apart in q, k and `stride` = H·D in v, num.
#include "layers/attention/kernels/linear_attention.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "core/runtime/math/isa_clones.h"
#include "layers/attention/kernels/kernel_utils.h"

namespace tn {
namespace {

using kernel_detail::dot;
using kernel_detail::fill_zero;
using kernel_detail::gather_rows;
using kernel_detail::row_dots;
using kernel_detail::for_row_blocks;
using kernel_detail::kBlockRows;
using kernel_detail::RowAcc;
using kernel_detail::RowsAcc;
using kernel_detail::add_lower_rows;
using kernel_detail::add_upper_rows;
using kernel_detail::keep_all;

/// One (b, h): pointers at its row 0; den (may be null) at its [b, 0, h] entry with stride H.
struct HeadPtrs {
  const float* q;
  const float* k;
  const float* v;
  int64_t key_stride;  // H·K between consecutive positions of q, k, dq, dk
  int64_t stride;      // H·D between consecutive positions of v, num, d_num, dv
  int64_t den_stride;  // H
};

constexpr int64_t kNonCausalBlock = 64;  // rows gathered at once by the non-causal forms

/// x[r] (+)= Σ_{t < n} a[t·A + r] b_t for the rows r < A of an A×W matrix x (b_t of width W =
/// kW, 0 for a runtime width; a_t of width A), kBlockRows rows at a time in registers. With `load`
/// false the rows start from zero. scratch: [W] for a runtime width.
template <int kW, class V>
void rank_update(float* __restrict x, const float* a, int64_t A, const float* b, int64_t W,
                 int64_t n, bool load, float* scratch) {
  for_row_blocks<kBlockRows<kW, V>>(A, [&]<int R>(int64_t r0) {
    RowsAcc<kW, V, R> acc(scratch, W);
    acc.zero();
    if (load)
      for (int r = 0; r < R; ++r) acc.load(r, x + (r0 + r) * W);
    for (int64_t t = 0; t < n; ++t) acc.add_rows([&](int r) { return a[t * A + r0 + r]; }, b + t * W);
    for (int r = 0; r < R; ++r) acc.store(r, x + (r0 + r) * W);
  });
}

/// One (b, h) of linear_attention_forward, with V the vector type of the instruction set it is
/// compiled for (run through run_at_width). Rows of num are accumulated kBlockRows at a time.
template <int kK, int kD, class V>
void forward_head(const HeadPtrs& p, int64_t T, int64_t d_key, int64_t d_head, bool causal,
                  int64_t C, float* __restrict num, float* __restrict den,
                  float* __restrict scratch) {
  const int64_t K = kK > 0 ? kK : d_key;
  const int64_t D = kD > 0 ? kD : d_head;
  const int64_t kst = p.key_stride, st = p.stride;
  float* __restrict state =
      scratch;  // [K][D]: Σ k_jᵀ v_j over earlier chunks (all of T when non-causal)
  float* __restrict k_sum = state + K * D;  // [K]
  float* __restrict S = k_sum + K;          // [C][C]: masked intra-chunk q_i·k_j
  const int64_t rows = std::max(C, kNonCausalBlock);
  float* __restrict qc = S + C * C;  // [rows][K] gathered chunk rows
  float* __restrict kc = qc + rows * K;
  float* __restrict vc = kc + rows * K;  // [rows][D]
  float* __restrict acc_rows = vc + rows * D;
  RowAcc<kK, V> acc_k(acc_rows + D, K);  // one key-width row (scratch [K] when kK == 0)
  fill_zero(state, K * D);
  fill_zero(k_sum, K);
  // state[d] += Σ_{j < n} kc_j[d] vc_j, k_sum += Σ_j kc_j.
  auto add_to_state = [&](int64_t n) {
    rank_update<kD, V>(state, kc, K, vc, D, n, true, acc_rows);
    if (den) {
      acc_k.load(k_sum);
      for (int64_t j = 0; j < n; ++j) acc_k.add(1.f, kc + j * K);
      acc_k.store(k_sum);
    }
  };
  // num_i = q_i · state + Σ_{j <= i} S_ij v_j (j of the chunk, causal only) for the n rows whose q
  // is at q (row stride qs), written from row `out` of num.
  auto num_rows = [&](const float* q, int64_t qs, int64_t n, bool intra, int64_t out) {
    for_row_blocks<kBlockRows<kD, V>>(n, [&]<int R>(int64_t i0) {
      RowsAcc<kD, V, R> acc(acc_rows, D);
      acc.zero();
      for (int64_t d = 0; d < K; ++d)
        acc.add_rows([&](int r) { return q[(i0 + r) * qs + d]; }, state + d * D);
      if (intra)
        add_lower_rows<R>(acc, i0, i0 + 1, [&](int r, int64_t j) { return S[(i0 + r) * C + j]; },
                          keep_all, vc, D);
      for (int r = 0; r < R; ++r) acc.store(r, num + (out + i0 + r) * st);
    });
    if (!den) return;
    for (int64_t i = 0; i < n; ++i) {
      float s = dot<V>(q + i * qs, k_sum, K);
      if (intra)
        for (int64_t j = 0; j <= i; ++j) s += S[i * C + j];
      den[(out + i) * p.den_stride] = s;
    }
  };

  if (!causal) {
    for (int64_t c0 = 0; c0 < T; c0 += kNonCausalBlock) {
      const int64_t n = std::min(kNonCausalBlock, T - c0);
      gather_rows(p.k + c0 * kst, kst, n, K, kc);
      gather_rows(p.v + c0 * st, st, n, D, vc);
      add_to_state(n);
    }
    for (int64_t c0 = 0; c0 < T; c0 += kNonCausalBlock) {
      const int64_t n = std::min(kNonCausalBlock, T - c0);
      gather_rows(p.q + c0 * kst, kst, n, K, qc);
      num_rows(qc, K, n, false, c0);
    }
    return;
  }

  for (int64_t c0 = 0; c0 < T; c0 += C) {
    const int64_t n = std::min(C, T - c0);
    gather_rows(p.q + c0 * kst, kst, n, K, qc);
    gather_rows(p.k + c0 * kst, kst, n, K, kc);
    gather_rows(p.v + c0 * st, st, n, D, vc);
    for (int64_t i = 0; i < n; ++i) row_dots<V>(qc + i * K, kc, K, i + 1, K, S + i * C);
    num_rows(qc, K, n, true, c0);
    add_to_state(n);
  }
}

// Gradients of Σ g_i·num_i + gd_i·den_i with g = d_num, gd = d_den (0 when null):
//   dq_i = Σ_j G_ij k_j,  dk_j = Σ_i G_ij q_i,  dv_j = Σ_i S_ij g_i,  G_ij = g_i·v_j + gd_i, S_ij =
//   q_i·k_j. Output rows are accumulated kBlockRows at a time (RowsAcc: the bits of one at a time).
template <int kK, int kD, class V>
void backward_head(const HeadPtrs& p, int64_t T, int64_t d_key, int64_t d_head, bool causal,
                   int64_t C, const float* __restrict d_num, const float* __restrict d_den,
                   float* __restrict dq, float* __restrict dk, float* __restrict dv,
                   float* __restrict scratch) {
  const int64_t K = kK > 0 ? kK : d_key;
  const int64_t D = kD > 0 ? kD : d_head;
  const int64_t kst = p.key_stride, st = p.stride;
  float* __restrict state_t = scratch;        // [D(e)][K(d)]: Σ v_j[e] k_j[d] over earlier keys
  float* __restrict k_sum = state_t + D * K;  // [K]
  float* __restrict R = k_sum + K;            // [K(d)][D(e)]: Σ q_i[d] g_i[e] over later queries
  float* __restrict qd_sum = R + K * D;       // [K]: Σ gd_i q_i over later queries
  float* __restrict dk_row = qd_sum + K;      // [K]: R·v_j
  float* __restrict S = dk_row + K;           // [C][C]
  float* __restrict G = S + C * C;            // [C][C]
  const int64_t rows = std::max(C, kNonCausalBlock);
  float* __restrict qc = G + C * C;  // [rows][K] gathered chunk rows of q, k; [rows][D] of v, d_num
  float* __restrict kc = qc + rows * K;
  float* __restrict vc = kc + rows * K;
  float* __restrict gc = vc + rows * D;
  float* __restrict acc_rows = gc + rows * D;  // [D] then [K]: runtime-width accumulator rows
  float* __restrict acc_k_rows = acc_rows + D;
  RowAcc<kK, V> acc_k(acc_k_rows, K);  // one key-width row (scratch [K] when kK == 0)
  constexpr int kRK = kBlockRows<kK, V>, kRD = kBlockRows<kD, V>;
  auto gd = [&](int64_t i) { return d_den ? d_den[i * p.den_stride] : 0.f; };
  auto gather = [&](int64_t c0, int64_t n) {
    gather_rows(p.q + c0 * kst, kst, n, K, qc);
    gather_rows(p.k + c0 * kst, kst, n, K, kc);
    gather_rows(p.v + c0 * st, st, n, D, vc);
    gather_rows(d_num + c0 * st, st, n, D, gc);
  };
  auto add_state = [&](int64_t n) {  // state_t += Σ v_jᵀ k_j, k_sum += Σ k_j over the chunk
    rank_update<kK, V>(state_t, vc, D, kc, K, n, true, acc_k_rows);
    if (!d_den) return;
    acc_k.load(k_sum);
    for (int64_t j = 0; j < n; ++j) acc_k.add(1.f, kc + j * K);
    acc_k.store(k_sum);
  };
  auto add_reverse_state = [&](int64_t c0, int64_t n) {  // R += Σ q_iᵀ g_i, qd_sum += Σ gd_i q_i
    rank_update<kD, V>(R, qc, K, gc, D, n, true, acc_rows);
    if (!d_den) return;
    acc_k.load(qd_sum);
    for (int64_t i = 0; i < n; ++i) acc_k.add(gd(c0 + i), qc + i * K);
    acc_k.store(qd_sum);
  };
  // dq_i = Σ_e g_i[e] state_t[e] + gd_i k_sum (+ Σ_{j <= i} G_ij k_j of the chunk when intra) for
  // the n rows whose d_num is at g (row stride gs), written from row `out` of dq.
  auto dq_rows = [&](const float* g, int64_t gs, int64_t n, bool intra, int64_t out) {
    for_row_blocks<kRK>(n, [&]<int RR>(int64_t i0) {
      RowsAcc<kK, V, RR> acc(acc_k_rows, K);
      acc.zero();
      for (int64_t e = 0; e < D; ++e)
        acc.add_rows([&](int r) { return g[(i0 + r) * gs + e]; }, state_t + e * K);
      if (d_den) acc.add_rows([&](int r) { return gd(out + i0 + r); }, k_sum);
      if (intra)
        add_lower_rows<RR>(acc, i0, i0 + 1, [&](int r, int64_t j) { return G[(i0 + r) * C + j]; },
                           keep_all, kc, K);
      for (int r = 0; r < RR; ++r) acc.store(r, dq + (out + i0 + r) * kst);
    });
  };
  // y_j = Σ_{i = j}^{n - 1} M_ij x_i for the chunk's rows j (M = G, x = q: dk; M = S, x = g: dv),
  // each row's terms in order of i, written to out (row stride os).
  auto transposed_intra = [&]<int kX, int kR>(const float* M, const float* x, int64_t X,
                                               int64_t n, float* out, int64_t os, float* scr) {
    for_row_blocks<kR>(n, [&]<int RR>(int64_t j0) {
      RowsAcc<kX, V, RR> acc(scr, X);
      acc.zero();
      add_upper_rows<RR>(acc, j0, j0, j0 + RR - 1, n,
                         [&](int64_t i, int r) { return M[i * C + j0 + r]; },
                         [&](int64_t i) { return x + i * X; });
      for (int r = 0; r < RR; ++r) acc.store(r, out + (j0 + r) * os);
    });
  };
  // From the queries of later chunks, for the n rows j whose k, v are at k_rows, v_rows (row
  // strides ks, vs), from row `out`: dk_j (+)= R v_j + qd_sum (K dot products: cheaper than
  // keeping Rᵀ up to date); dv_j (+)= Σ_d k_j[d] R[d].
  auto dkv_reverse = [&](const float* k_rows, int64_t ks, const float* v_rows, int64_t vs,
                         int64_t n, int64_t out, bool overwrite) {
    for (int64_t j = 0; j < n; ++j) {
      row_dots<V>(v_rows + j * vs, R, D, K, D, dk_row);
      float* __restrict dkj = dk + (out + j) * kst;
      if (overwrite)
        for (int64_t d = 0; d < K; ++d) dkj[d] = dk_row[d] + qd_sum[d];
      else
        for (int64_t d = 0; d < K; ++d) dkj[d] += dk_row[d] + qd_sum[d];
    }
    for_row_blocks<kRD>(n, [&]<int RR>(int64_t j0) {
      RowsAcc<kD, V, RR> acc(acc_rows, D);
      acc.zero();
      for (int64_t d = 0; d < K; ++d)
        acc.add_rows([&](int r) { return k_rows[(j0 + r) * ks + d]; }, R + d * D);
      for (int r = 0; r < RR; ++r) {
        float* dvj = dv + (out + j0 + r) * st;
        if (!overwrite) acc.add(r, 1.f, dvj);
        acc.store(r, dvj);
      }
    });
  };
  fill_zero(state_t, D * K);
  fill_zero(k_sum, K);
  fill_zero(R, K * D);
  fill_zero(qd_sum, K);

  if (!causal) {
    for (int64_t c0 = 0; c0 < T; c0 += kNonCausalBlock) {
      const int64_t n = std::min(kNonCausalBlock, T - c0);
      gather(c0, n);
      add_state(n);
      add_reverse_state(c0, n);
    }
    for (int64_t c0 = 0; c0 < T; c0 += kNonCausalBlock) {
      const int64_t n = std::min(kNonCausalBlock, T - c0);
      gather(c0, n);
      dq_rows(gc, D, n, false, c0);
      dkv_reverse(kc, K, vc, D, n, c0, true);
    }
    return;
  }

  // Forward sweep: dq (intra-chunk + state of earlier chunks), intra-chunk parts of dk and dv.
  for (int64_t c0 = 0; c0 < T; c0 += C) {
    const int64_t n = std::min(C, T - c0);
    gather(c0, n);
    for (int64_t i = 0; i < n; ++i) {
      row_dots<V>(qc + i * K, kc, K, i + 1, K, S + i * C);
      row_dots<V>(gc + i * D, vc, D, i + 1, D, G + i * C);
      const float gdi = gd(c0 + i);
      for (int64_t j = 0; j <= i; ++j) G[i * C + j] += gdi;
    }
    dq_rows(gc, D, n, true, c0);
    transposed_intra.template operator()<kK, kRK>(G, qc, K, n, dk + c0 * kst, kst, acc_k_rows);
    transposed_intra.template operator()<kD, kRD>(S, gc, D, n, dv + c0 * st, st, acc_rows);
    add_state(n);
  }
  // Reverse sweep: dk, dv from the queries of later chunks.
  const int64_t last = ((T - 1) / C) * C;
  for (int64_t c0 = last; c0 >= 0; c0 -= C) {
    const int64_t n = std::min(C, T - c0);
    gather(c0, n);
    if (c0 != last) dkv_reverse(kc, K, vc, D, n, c0, false);
    add_reverse_state(c0, n);
  }
}

template <int kK, int kD>
struct ForwardHead {
  template <class V, class... Args>
  static void run(Args&&... args) {
    forward_head<kK, kD, V>(std::forward<Args>(args)...);
  }
};

template <int kK, int kD>
struct BackwardHead {
  template <class V, class... Args>
  static void run(Args&&... args) {
    backward_head<kK, kD, V>(std::forward<Args>(args)...);
  }
};

void check_args(const char* op, const AttentionDims& dims, int64_t chunk, const void* q,
                const void* k, const void* v) {
  check_attention_dims_any_key(op, dims);
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
  const int64_t T = dims.seq_len, H = dims.n_heads, D = dims.d_head, K = key_width(dims);
  auto row = [&](int64_t b, int64_t t, int64_t h) { return (b * T + t) * H + h; };
  std::vector<double> acc(D);
  for (int64_t b = 0; b < dims.batch; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < T; ++i) {
        std::fill(acc.begin(), acc.end(), 0.0);
        double den_i = 0.0;
        for (int64_t j = 0; j < T; ++j) {
          if (causal && j > i) continue;  // masked: (q_i·k_j)·0
          double s = 0.0;
          for (int64_t d = 0; d < K; ++d)
            s += double(q[row(b, i, h) * K + d]) * double(k[row(b, j, h) * K + d]);
          for (int64_t e = 0; e < D; ++e) acc[e] += s * double(v[row(b, j, h) * D + e]);
          den_i += s;
        }
        for (int64_t e = 0; e < D; ++e) num[row(b, i, h) * D + e] = Real(acc[e]);
        if (den) den[row(b, i, h)] = Real(den_i);
      }
}

}  // namespace

void linear_attention_forward(const AttentionDims& dims, bool causal, int64_t chunk, const float* q,
                              const float* k, const float* v, float* num, float* den) {
  check_args("linear_attention_forward", dims, chunk, q, k, v);
  const int64_t B = dims.batch, T = dims.seq_len, H = dims.n_heads, D = dims.d_head;
  const int64_t K = key_width(dims);
  if (B * T * H == 0) return;
  const int64_t C = std::min(chunk, T);
  const int64_t G = std::max(C, kNonCausalBlock);  // gathered rows
  // state, k_sum, S, q/k rows, v rows, the two accumulator rows
  const size_t scratch_floats = size_t(K * D + K + C * C + 2 * G * K + G * D + D + K);
  kernel_detail::dispatch_widths(K, D, [&]<int kK, int kD>() {
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h) {
        const int64_t row = b * T * H + h;
        HeadPtrs p{q + row * K, k + row * K, v + row * D, H * K, H * D, H};
        run_at_width<ForwardHead<kK, kD>>(p, T, K, D, causal, C, num + row * D,
                                          den ? den + row : nullptr,
                                          kernel_detail::thread_scratch(scratch_floats));
      }
  });
}

void linear_attention_backward(const AttentionDims& dims, bool causal, int64_t chunk,
                               const float* q, const float* k, const float* v, const float* d_num,
                               const float* d_den, float* dq, float* dk, float* dv) {
  check_args("linear_attention_backward", dims, chunk, q, k, v);
  const int64_t B = dims.batch, T = dims.seq_len, H = dims.n_heads, D = dims.d_head;
  const int64_t K = key_width(dims);
  if (B * T * H == 0) return;
  const int64_t C = std::min(chunk, T);
  const int64_t G = std::max(C, kNonCausalBlock);  // gathered rows
  // state_t, R; k_sum, qd_sum, dk_row; S, G; q/k rows; v/d_num rows; the two accumulator rows
  const size_t scratch_floats =
      size_t(2 * K * D + 3 * K + 2 * C * C + 2 * G * K + 2 * G * D + D + K);
  kernel_detail::dispatch_widths(K, D, [&]<int kK, int kD>() {
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h) {
        const int64_t row = b * T * H + h;
        HeadPtrs p{q + row * K, k + row * K, v + row * D, H * K, H * D, H};
        run_at_width<BackwardHead<kK, kD>>(p, T, K, D, causal, C, d_num + row * D,
                                           d_den ? d_den + row : nullptr, dq + row * K,
                                           dk + row * K, dv + row * D,
                                           kernel_detail::thread_scratch(scratch_floats));
      }
  });
}

void linear_attention_forward_naive(const AttentionDims& dims, bool causal, const float* q,
                                    const float* k, const float* v, float* num, float* den) {
  check_attention_dims_any_key("linear_attention_forward_naive", dims);
  forward_naive(dims, causal, q, k, v, num, den);
}

void linear_attention_forward_naive(const AttentionDims& dims, bool causal, const double* q,
                                    const double* k, const double* v, double* num, double* den) {
  check_attention_dims_any_key("linear_attention_forward_naive", dims);
  forward_naive(dims, causal, q, k, v, num, den);
}

void linear_attention_backward_naive(const AttentionDims& dims, bool causal, const float* q,
                                     const float* k, const float* v, const float* d_num,
                                     const float* d_den, float* dq, float* dk, float* dv) {
  check_attention_dims_any_key("linear_attention_backward_naive", dims);
  const int64_t T = dims.seq_len, H = dims.n_heads, D = dims.d_head, K = key_width(dims);
  const size_t nk = size_t(attention_key_numel(dims)), n = size_t(attention_numel(dims));
  std::vector<double> gq(nk, 0.0), gk(nk, 0.0), gv(n, 0.0);
  auto row = [&](int64_t b, int64_t t, int64_t h) { return (b * T + t) * H + h; };
  for (int64_t b = 0; b < dims.batch; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < T; ++i)
        for (int64_t j = 0; j < T; ++j) {
          if (causal && j > i) continue;
          const int64_t qi = row(b, i, h) * K, kj = row(b, j, h) * K;  // q, k rows
          const int64_t gi = row(b, i, h) * D, vj = row(b, j, h) * D;  // d_num, v rows
          double s = 0.0, g = d_den ? double(d_den[row(b, i, h)]) : 0.0;
          for (int64_t d = 0; d < K; ++d) s += double(q[qi + d]) * double(k[kj + d]);
          for (int64_t e = 0; e < D; ++e) g += double(d_num[gi + e]) * double(v[vj + e]);
          for (int64_t d = 0; d < K; ++d) {
            gq[qi + d] += g * double(k[kj + d]);
            gk[kj + d] += g * double(q[qi + d]);
          }
          for (int64_t e = 0; e < D; ++e) gv[vj + e] += s * double(d_num[gi + e]);
        }
  for (size_t i = 0; i < nk; ++i) {
    dq[i] = float(gq[i]);
    dk[i] = float(gk[i]);
  }
  for (size_t i = 0; i < n; ++i) dv[i] = float(gv[i]);
}

}  // namespace tn
