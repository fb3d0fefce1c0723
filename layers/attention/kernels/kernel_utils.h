#pragma once
// Internal helpers for the attention kernels in this folder (not part of their public API).
// Small inline loops written so the compiler vectorises them (contiguous, restrict, omp simd).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/runtime/math/fast_exp.h"
#include "core/runtime/math/isa_clones.h"

namespace tn::kernel_detail {

constexpr int kLanes = 16;  // fixed accumulation lanes of dot() and dot4()

/// Floats per V: 16, 8 or 4 for the vector types of core/runtime/math/isa_clones.h, 1 for float (plain
/// arrays, which each TN_ISA_CLONES clone vectorises at its own width).
template <class V>
constexpr int kWidth = int(sizeof(V) / sizeof(float));

/// 16 fixed lanes as 16/W values of V.
template <class V>
struct Lanes {
  static constexpr int kU = kLanes / kWidth<V>;
  V v[kU];

  void zero() {
    for (int u = 0; u < kU; ++u) v[u] = V{};
  }
  /// lane[l] += a[l]·b[l].
  void fma(const float* a, const float* b) {
    for (int u = 0; u < kU; ++u) {
      V x, y;
      std::memcpy(&x, a + kWidth<V> * u, sizeof x);
      std::memcpy(&y, b + kWidth<V> * u, sizeof y);
      v[u] += x * y;
    }
  }
  /// lane[l] += a[l].
  void add(const float* a) {
    for (int u = 0; u < kU; ++u) {
      V x;
      std::memcpy(&x, a + kWidth<V> * u, sizeof x);
      v[u] += x;
    }
  }
  /// The four lanes h[l] = Σ of lanes l, l+4, l+8, l+12 by the fixed tree: halves added,
  /// 16 -> 8 -> 4.
  F32x4 reduce_to_4() const {
    if constexpr (kWidth<V> == 16) {
      const F32x8 h8 = __builtin_shufflevector(v[0], v[0], 0, 1, 2, 3, 4, 5, 6, 7) +
                       __builtin_shufflevector(v[0], v[0], 8, 9, 10, 11, 12, 13, 14, 15);
      return __builtin_shufflevector(h8, h8, 0, 1, 2, 3) +
             __builtin_shufflevector(h8, h8, 4, 5, 6, 7);
    } else if constexpr (kWidth<V> == 8) {
      const F32x8 h8 = v[0] + v[1];
      return __builtin_shufflevector(h8, h8, 0, 1, 2, 3) +
             __builtin_shufflevector(h8, h8, 4, 5, 6, 7);
    } else if constexpr (kWidth<V> == 4) {
      return (v[0] + v[2]) + (v[1] + v[3]);
    } else {
      float h8[8];
      for (int l = 0; l < 8; ++l) h8[l] = v[l] + v[l + 8];
      return F32x4{h8[0] + h8[4], h8[1] + h8[5], h8[2] + h8[6], h8[3] + h8[7]};
    }
  }
};

/// Copies count < 16 floats and zero-fills the rest of the 16 lanes.
inline void load_partial(float* __restrict dst, const float* src, int64_t count) {
  for (int l = 0; l < kLanes; ++l) dst[l] = l < count ? src[l] : 0.f;
}

/// Σ a[i]·b[i] in f32, accumulated in 16 fixed lanes (lane = i % 16; a partial last group is
/// zero-filled) and reduced by a fixed tree: halves added down to 4 lanes h, then
/// (h[0] + h[2]) + (h[1] + h[3]). No plain scalar reduction loop: GCC vectorises those as in-order
/// reductions without FMA but runs their scalar form with FMA, so the bits would depend on n and
/// on alignment. Here the same inputs give the same bits for any n padding with zeros, any address
/// and any V (padding invariance, reproducibility), and the loop is 16/W vector FMAs per 16
/// elements. V: the vector type of the caller's instruction set (run_at_width), or float in a
/// TN_ISA_CLONES function.
template <class V = float>
inline float dot(const float* a, const float* b, int64_t n) {
  Lanes<V> acc;
  acc.zero();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) acc.fma(a + i, b + i);
  if (i < n) {
    float ta[kLanes], tb[kLanes];
    load_partial(ta, a + i, n - i);
    load_partial(tb, b + i, n - i);
    acc.fma(ta, tb);
  }
  const F32x4 h = acc.reduce_to_4();
  return (h[0] + h[2]) + (h[1] + h[3]);
}

/// Σ a[i] in the 16 fixed lanes and the fixed tree of dot(): the same bits for any n padding with
/// zeros, any address and any V, at vector speed (a plain `s += a[i]` loop is an in-order scalar
/// chain).
template <class V = float>
inline float sum(const float* a, int64_t n) {
  Lanes<V> acc;
  acc.zero();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) acc.add(a + i);
  if (i < n) {
    float ta[kLanes];
    load_partial(ta, a + i, n - i);
    acc.add(ta);
  }
  const F32x4 h = acc.reduce_to_4();
  return (h[0] + h[2]) + (h[1] + h[3]);
}

/// Σ a[i]·b[i] (b null: Σ a[i]) over long rows: four of dot()'s 16-lane sets, element i in set
/// (i / 16) mod 4 (a partial last group zero-filled), the sets added lane-wise as (s0 + s1) + (s2 +
/// s3), then dot()'s tree. Four independent chains, so the sum runs at the adder's throughput, not
/// its latency; the same bits for any V, address and zero padding, but not dot()'s bits.
template <class V = float>
inline float dot64(const float* a, const float* b, int64_t n) {
  Lanes<V> s[4];
  for (auto& set : s) set.zero();
  auto add = [&](Lanes<V>& set, const float* x, const float* y) {
    if (y)
      set.fma(x, y);
    else
      set.add(x);
  };
  int64_t i = 0;
  for (; i + 4 * kLanes <= n; i += 4 * kLanes)
    for (int k = 0; k < 4; ++k) add(s[k], a + i + k * kLanes, b ? b + i + k * kLanes : nullptr);
  for (; i + kLanes <= n; i += kLanes) add(s[(i / kLanes) % 4], a + i, b ? b + i : nullptr);
  if (i < n) {
    float ta[kLanes], tb[kLanes];
    load_partial(ta, a + i, n - i);
    if (b) load_partial(tb, b + i, n - i);
    add(s[(i / kLanes) % 4], ta, b ? tb : nullptr);
  }
  for (int u = 0; u < Lanes<V>::kU; ++u) s[0].v[u] = (s[0].v[u] + s[1].v[u]) + (s[2].v[u] + s[3].v[u]);
  const F32x4 h = s[0].reduce_to_4();
  return (h[0] + h[2]) + (h[1] + h[3]);
}

/// out[r] = dot<V>(a, b[r], n) for r = 0..3, bit-identical to four dot() calls, sharing the loads
/// of a and finishing the four trees side by side.
template <class V = float>
inline void dot4(const float* a, const float* b0, const float* b1, const float* b2, const float* b3,
                 int64_t n, float* out) {
  Lanes<V> c0, c1, c2, c3;
  c0.zero(), c1.zero(), c2.zero(), c3.zero();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    c0.fma(a + i, b0 + i);
    c1.fma(a + i, b1 + i);
    c2.fma(a + i, b2 + i);
    c3.fma(a + i, b3 + i);
  }
  if (i < n) {
    const int64_t m = n - i;
    float x[kLanes], t[kLanes];
    load_partial(x, a + i, m);
    load_partial(t, b0 + i, m);
    c0.fma(x, t);
    load_partial(t, b1 + i, m);
    c1.fma(x, t);
    load_partial(t, b2 + i, m);
    c2.fma(x, t);
    load_partial(t, b3 + i, m);
    c3.fma(x, t);
  }
  const F32x4 h0 = c0.reduce_to_4(), h1 = c1.reduce_to_4(), h2 = c2.reduce_to_4(),
              h3 = c3.reduce_to_4();
  // [h0[0]+h0[2], h0[1]+h0[3], h1[0]+h1[2], h1[1]+h1[3]], the same for h2, h3; then pairs added.
  const F32x4 p01 = __builtin_shufflevector(h0, h1, 0, 1, 4, 5) +
                    __builtin_shufflevector(h0, h1, 2, 3, 6, 7);
  const F32x4 p23 = __builtin_shufflevector(h2, h3, 0, 1, 4, 5) +
                    __builtin_shufflevector(h2, h3, 2, 3, 6, 7);
  const F32x4 r = __builtin_shufflevector(p01, p23, 0, 2, 4, 6) +
                  __builtin_shufflevector(p01, p23, 1, 3, 5, 7);
  std::memcpy(out, &r, sizeof r);
}

/// out[j] = dot<V>(a, rows + j·stride, n) for j < count (groups of four through dot4).
template <class V = float>
inline void row_dots(const float* a, const float* rows, int64_t stride, int64_t count, int64_t n,
                     float* out) {
  const int64_t full = count & ~int64_t(3);
  for (int64_t j = 0; j < full; j += 4) {
    const float* b = rows + j * stride;
    dot4<V>(a, b, b + stride, b + 2 * stride, b + 3 * stride, n, out + j);
  }
  for (int64_t r = 0; r < (count & 3); ++r)
    out[full + r] = dot<V>(a, rows + (full + r) * stride, n);
}

/// y += alpha·x.
inline void axpy(float alpha, const float* __restrict x, float* __restrict y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

inline void fill_zero(float* __restrict y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = 0.f;
}

/// Copies `rows` rows of D floats, `stride` apart, to contiguous dst. Rows of one head are H·D
/// floats apart, often a power of two (2 KB for d_model 512): rows reused many times (a chunk's or
/// block's k and v) then fall into a few L1 sets and evict each other, so kernels copy such rows
/// into per-thread scratch first (measured: 1.8x on the chunked linear forward at d_model 512).
inline void gather_rows(const float* src, int64_t stride, int64_t rows, int64_t D,
                        float* __restrict dst) {
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(dst + r * D, src + r * stride, size_t(D) * sizeof(float));
}

/// One output row of D floats being accumulated. For kD > 0 (a multiple of 16) the row lives in
/// kD/W registers of the vector type V (W floats: see run_at_width in core/runtime/math/isa_clones.h), so a
/// loop of add() calls streams its inputs without storing the row each time; for kD == 0 (any
/// runtime width) it lives in caller scratch of D floats. Every element is updated as
/// row[e] = fma(a, x[e], row[e]) in the same order in every form, so all give the same bits.
template <int kD, class V>
struct RowAcc {
  static constexpr int kW = int(sizeof(V) / sizeof(float));
  static_assert(kD % 16 == 0 && kD > 0 && 16 % kW == 0);
  V v[kD / kW];
  RowAcc(float* /*scratch*/, int64_t /*d_head*/) {}
  void zero() {
    for (int u = 0; u < kD / kW; ++u) v[u] = V{};
  }
  // Per register, not one memcpy of v: that would keep v in memory rather than in registers.
  void load(const float* x) {
    for (int u = 0; u < kD / kW; ++u) std::memcpy(&v[u], x + kW * u, sizeof(V));
  }
  void add(float a, const float* x) {
    for (int u = 0; u < kD / kW; ++u) {
      V xu;
      std::memcpy(&xu, x + kW * u, sizeof xu);
      v[u] += a * xu;
    }
  }
  void store(float* y) const {
    for (int u = 0; u < kD / kW; ++u) std::memcpy(y + kW * u, &v[u], sizeof(V));
  }
};

template <class V>
struct RowAcc<0, V> {
  float* row;
  int64_t n;
  RowAcc(float* scratch, int64_t d_head) : row(scratch), n(d_head) {}
  void zero() { fill_zero(row, n); }
  void load(const float* x) { std::memcpy(row, x, size_t(n) * sizeof(float)); }
  void add(float a, const float* x) { axpy(a, x, row, n); }
  void store(float* y) const { std::memcpy(y, row, size_t(n) * sizeof(float)); }
};

/// Rows of kD floats that RowsAcc keeps in registers at once: four when four rows take at most
/// half the vector registers (AVX-512: kD <= 64; AVX2: kD <= 16), else one.
template <int kD, class V>
constexpr int kBlockRows = (kD > 0 && 4 * (kD / kWidth<V>) <= (kWidth<V> == 16 ? 16 : 8)) ? 4 : 1;

/// kR output rows of kD floats accumulated side by side (register blocking): add_rows reads an
/// input row once for all kR rows, where kR RowAcc loops would read it kR times. Each element
/// still sees row[e] = fma(a, x[e], row[e]) in its own row's order, so the bits are RowAcc's.
template <int kD, class V, int kR>
struct RowsAcc {
  static constexpr int kW = kWidth<V>, kU = kD / kW;
  static_assert(kD % 16 == 0 && kD > 0 && 16 % kW == 0 && kR >= 1);
  V v[kR][kU];
  RowsAcc(float* /*scratch*/, int64_t /*d_head*/) {}
  void zero() {
    for (int r = 0; r < kR; ++r)
      for (int u = 0; u < kU; ++u) v[r][u] = V{};
  }
  void load(int r, const float* x) {
    for (int u = 0; u < kU; ++u) std::memcpy(&v[r][u], x + kW * u, sizeof(V));
  }
  void store(int r, float* y) const {
    for (int u = 0; u < kU; ++u) std::memcpy(y + kW * u, &v[r][u], sizeof(V));
  }
  /// row r += a·x.
  void add(int r, float a, const float* x) {
    for (int u = 0; u < kU; ++u) {
      V xu;
      std::memcpy(&xu, x + kW * u, sizeof xu);
      v[r][u] += a * xu;
    }
  }
  /// row r += a(r)·x for every row r.
  template <class A>
  void add_rows(const A& a, const float* x) {
    float c[kR];
    for (int r = 0; r < kR; ++r) c[r] = a(r);
    for (int u = 0; u < kU; ++u) {
      V xu;
      std::memcpy(&xu, x + kW * u, sizeof xu);
      for (int r = 0; r < kR; ++r) v[r][u] += c[r] * xu;
    }
  }
};

/// The runtime-width row (kD == 0): one row in caller scratch, as RowAcc<0, V>.
template <class V>
struct RowsAcc<0, V, 1> {
  RowAcc<0, V> row;
  RowsAcc(float* scratch, int64_t d_head) : row(scratch, d_head) {}
  void zero() { row.zero(); }
  void load(int, const float* x) { row.load(x); }
  void store(int, float* y) const { row.store(y); }
  void add(int, float a, const float* x) { row.add(a, x); }
  template <class A>
  void add_rows(const A& a, const float* x) {
    row.add(a(0), x);
  }
};

/// Calls body.template operator()<R>(r0) over rows [0, n): blocks of kR rows, then single rows.
template <int kR, class Body>
inline void for_row_blocks(int64_t n, Body&& body) {
  int64_t r = 0;
  if constexpr (kR > 1)
    for (; r + kR <= n; r += kR) body.template operator()<kR>(r);
  for (; r < n; ++r) body.template operator()<1>(r);
}

/// The causal (lower-triangular) sum of R output rows i0 + r, r < R, accumulated in acc:
/// row r += Σ coef(r, j) x_j over the keys j <= i0 + r with keep(j), x_j at x + j·xs. The keys
/// j < common, which every row of the block sees, are read once for all R rows (add_rows); then
/// each row takes its own keys j in [common, i0 + r] (none when common > i0 + R − 1, as for a
/// non-causal block with common = n). Each row's terms come in order of j: its bits are those of
/// the row accumulated alone.
template <int R, class Acc, class Coef, class Keep>
inline void add_lower_rows(Acc& acc, int64_t i0, int64_t common, const Coef& coef,
                           const Keep& keep, const float* x, int64_t xs) {
  for (int64_t j = 0; j < common; ++j)
    if (keep(j)) acc.add_rows([&](int r) { return coef(r, j); }, x + j * xs);
  for (int r = 1; r < R; ++r)
    for (int64_t j = common; j <= i0 + r; ++j)
      if (keep(j)) acc.add(r, coef(r, j), x + j * xs);
}

/// The `keep` of add_lower_rows when every key counts.
inline constexpr auto keep_all = [](int64_t) { return true; };

/// The transposed sum of add_lower_rows, for R output rows j0 + r (keys), r < R:
/// row r += Σ coef(i, r) x(i) over the rows i in [first, end) with i >= j0 + r. The rows before
/// `all` see only some keys of the block (tested per r); the rows from `all` on see every key and
/// are read once for all R rows. Each row's terms come in order of i.
template <int R, class Acc, class Coef, class Row>
inline void add_upper_rows(Acc& acc, int64_t j0, int64_t first, int64_t all, int64_t end,
                           const Coef& coef, const Row& x) {
  for (int64_t i = first; i < std::min(all, end); ++i)
    for (int r = 0; r < R; ++r)
      if (j0 + r <= i) acc.add(r, coef(i, r), x(i));
  for (int64_t i = all; i < end; ++i) acc.add_rows([&](int r) { return coef(i, r); }, x(i));
}

/// Per-thread scratch of at least n floats, reused across calls (grows, never shrinks). Valid until
/// the next call on the same thread; one region per kernel invocation, partitioned by the caller.
/// With TN_KERNEL_SCRATCH_CHECK defined (sanitizer builds), every call gets exactly n fresh floats
/// filled with NaN, so an overrun is an AddressSanitizer error and a read-before-write poisons the
/// results.
inline float* thread_scratch(size_t n) {
  thread_local std::vector<float> buffer;
#ifdef TN_KERNEL_SCRATCH_CHECK
  buffer = std::vector<float>(n, std::numeric_limits<float>::quiet_NaN());
#else
  if (buffer.size() < n) buffer.resize(n);
#endif
  return buffer.data();
}

/// Throws ShapeError "[op] what must be ..., got value" when value < min.
inline void check_at_least(const char* op, const char* what, int64_t value, int64_t min) {
  if (value < min)
    throw ShapeError(std::string("[") + op + "] " + what + " must be >= " + std::to_string(min) +
                     ", got " + std::to_string(value));
}

/// Throws ShapeError "[op] what must not be null" for a required pointer.
inline void check_not_null(const char* op, const char* what, const void* ptr) {
  if (ptr == nullptr) throw ShapeError(std::string("[") + op + "] " + what + " must not be null");
}

/// Calls f.template operator()<kD>() with kD = d_head for the common head widths (so the inner
/// loops get a compile-time trip count and RowAcc keeps rows in registers), kD = 0 (runtime width)
/// otherwise.
template <class F>
inline void dispatch_d_head(int64_t d_head, F&& f) {
  switch (d_head) {
    case 16:
      f.template operator()<16>();
      break;
    case 32:
      f.template operator()<32>();
      break;
    case 64:
      f.template operator()<64>();
      break;
    case 128:
      f.template operator()<128>();
      break;
    default:
      f.template operator()<0>();
      break;
  }
}

/// Calls f.template operator()<kK, kD>() with compile-time widths for the (key width, value width)
/// pairs that occur in practice: equal widths (linear, norm_attention) 16/32/64/128; cosFormer's
/// 2·d_head keys for d_head 16/32/64; Performer's m = 16 at d_head 32/64 and m = 64 at d_head
/// 16/32/64. Any other pair runs the runtime-width form kK = kD = 0 (the same arithmetic, slower).
template <class F>
inline void dispatch_widths(int64_t key_width, int64_t value_width, F&& f) {
#define TN_WIDTH_PAIR(K, D)                 \
  if (key_width == K && value_width == D) { \
    f.template operator()<K, D>();          \
    return;                                 \
  }
  TN_WIDTH_PAIR(16, 16)
  TN_WIDTH_PAIR(32, 32)
  TN_WIDTH_PAIR(64, 64)
  TN_WIDTH_PAIR(128, 128)
  TN_WIDTH_PAIR(32, 16)
  TN_WIDTH_PAIR(64, 32)
  TN_WIDTH_PAIR(128, 64)
  TN_WIDTH_PAIR(16, 32)
  TN_WIDTH_PAIR(16, 64)
  TN_WIDTH_PAIR(64, 16)
#undef TN_WIDTH_PAIR
  f.template operator()<0, 0>();
}

}  // namespace tn::kernel_detail

