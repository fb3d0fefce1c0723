#pragma once
// Internal helpers for the attention kernels in this folder (not part of their public API).
// Small inline loops written so the compiler vectorises them (contiguous, restrict, omp simd).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/math/fast_exp.h"

// The vector types below are only used inside inline functions; silence GCC's note that passing
// them by value would change the ABI on targets without AVX-512.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace tn::kernel_detail {

/// 16 floats as one value (GCC/Clang vector extension): one zmm with AVX-512, two ymm with AVX2.
typedef float F32x16 __attribute__((vector_size(64)));
typedef float F32x8 __attribute__((vector_size(32)));
typedef float F32x4 __attribute__((vector_size(16)));

inline F32x16 load16(const float* p) {
  F32x16 x;
  std::memcpy(&x, p, sizeof x);
  return x;
}

inline F32x16 load16_partial(const float* p, int64_t count) {  // lanes >= count are 0
  F32x16 x = {};
  for (int64_t l = 0; l < count; ++l) x[l] = p[l];
  return x;
}

/// Σ a[i]·b[i] in f32, accumulated in 16 fixed lanes (lane = i % 16; a partial last group is
/// zero-filled) and reduced by a fixed tree. No plain scalar reduction loop: GCC vectorises those
/// as in-order reductions without FMA but runs their scalar form with FMA, so the bits would depend
/// on n and on alignment. Here the same inputs give the same bits for any n padding with zeros and
/// any address (padding invariance, reproducibility), and the loop is one vector FMA per 16
/// elements.
inline float dot(const float* a, const float* b, int64_t n) {
  F32x16 acc = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) acc += load16(a + i) * load16(b + i);
  if (i < n) acc += load16_partial(a + i, n - i) * load16_partial(b + i, n - i);
  const F32x8 h8 = __builtin_shufflevector(acc, acc, 0, 1, 2, 3, 4, 5, 6, 7) +
                   __builtin_shufflevector(acc, acc, 8, 9, 10, 11, 12, 13, 14, 15);
  const F32x4 h4 =
      __builtin_shufflevector(h8, h8, 0, 1, 2, 3) + __builtin_shufflevector(h8, h8, 4, 5, 6, 7);
  return (h4[0] + h4[2]) + (h4[1] + h4[3]);
}

/// out[r] = dot(a, b[r], n) for r = 0..3, bit-identical to four dot() calls, sharing the loads of a
/// and the reduction tree (the same tree, applied to four accumulators side by side).
inline void dot4(const float* a, const float* b0, const float* b1, const float* b2, const float* b3,
                 int64_t n, float* out) {
  F32x16 c0 = {}, c1 = {}, c2 = {}, c3 = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const F32x16 x = load16(a + i);
    c0 += x * load16(b0 + i);
    c1 += x * load16(b1 + i);
    c2 += x * load16(b2 + i);
    c3 += x * load16(b3 + i);
  }
  if (i < n) {
    const int64_t m = n - i;
    const F32x16 x = load16_partial(a + i, m);
    c0 += x * load16_partial(b0 + i, m);
    c1 += x * load16_partial(b1 + i, m);
    c2 += x * load16_partial(b2 + i, m);
    c3 += x * load16_partial(b3 + i, m);
  }
  // 16 -> 8 lanes: [h8(c0) | h8(c1)] and [h8(c2) | h8(c3)].
  const F32x16 p01 =
      __builtin_shufflevector(c0, c1, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +
      __builtin_shufflevector(c0, c1, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
  const F32x16 p23 =
      __builtin_shufflevector(c2, c3, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +
      __builtin_shufflevector(c2, c3, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
  // 8 -> 4 lanes: [h4(c0) | h4(c1) | h4(c2) | h4(c3)].
  const F32x16 q4 =
      __builtin_shufflevector(p01, p23, 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27) +
      __builtin_shufflevector(p01, p23, 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
  // (h4[0] + h4[2]) + (h4[1] + h4[3]) per accumulator.
  const F32x4 x02 =
      __builtin_shufflevector(q4, q4, 0, 4, 8, 12) + __builtin_shufflevector(q4, q4, 2, 6, 10, 14);
  const F32x4 x13 =
      __builtin_shufflevector(q4, q4, 1, 5, 9, 13) + __builtin_shufflevector(q4, q4, 3, 7, 11, 15);
  const F32x4 r = x02 + x13;
  std::memcpy(out, &r, sizeof r);
}

/// out[j] = dot(a, rows + j·stride, n) for j < count (groups of four through dot4; bit-identical to
/// dot()).
inline void row_dots(const float* a, const float* rows, int64_t stride, int64_t count, int64_t n,
                     float* out) {
  const int64_t full = count & ~int64_t(3);
  for (int64_t j = 0; j < full; j += 4) {
    const float* b = rows + j * stride;
    dot4(a, b, b + stride, b + 2 * stride, b + 3 * stride, n, out + j);
  }
  for (int64_t r = 0; r < (count & 3); ++r) out[full + r] = dot(a, rows + (full + r) * stride, n);
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
/// kD/16 vector registers, so a loop of add() calls streams its inputs without storing the row each
/// time; for kD == 0 (any runtime width) it lives in caller scratch of D floats. Every element is
/// updated as row[e] = fma(a, x[e], row[e]) in the same order in both forms, so both give the same
/// bits.
template <int kD>
struct RowAcc {
  static_assert(kD % 16 == 0 && kD > 0);
  F32x16 v[kD / 16];
  RowAcc(float* /*scratch*/, int64_t /*d_head*/) {}
  void zero() {
    for (int u = 0; u < kD / 16; ++u) v[u] = F32x16{};
  }
  void load(const float* x) {
    for (int u = 0; u < kD / 16; ++u) v[u] = load16(x + 16 * u);
  }
  void add(float a, const float* x) {
    for (int u = 0; u < kD / 16; ++u) v[u] += a * load16(x + 16 * u);
  }
  void store(float* y) const { std::memcpy(y, v, sizeof v); }
};

template <>
struct RowAcc<0> {
  float* row;
  int64_t n;
  RowAcc(float* scratch, int64_t d_head) : row(scratch), n(d_head) {}
  void zero() { fill_zero(row, n); }
  void load(const float* x) { std::memcpy(row, x, size_t(n) * sizeof(float)); }
  void add(float a, const float* x) { axpy(a, x, row, n); }
  void store(float* y) const { std::memcpy(y, row, size_t(n) * sizeof(float)); }
};

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

#pragma GCC diagnostic pop
