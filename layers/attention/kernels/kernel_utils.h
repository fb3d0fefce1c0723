#pragma once
// Internal helpers for the attention kernels in this folder (not part of their public API).
// Small inline loops written so the compiler vectorises them (contiguous, restrict, omp simd).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"

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

/// Σ a[i]·b[i] in f32, accumulated in 16 fixed lanes (lane = i % 16; a partial last group is zero-filled)
/// and reduced by a fixed tree. No plain scalar reduction loop: GCC vectorises those as in-order
/// reductions without FMA but runs their scalar form with FMA, so the bits would depend on n and on
/// alignment. Here the same inputs give the same bits for any n padding with zeros and any address
/// (padding invariance, reproducibility), and the loop is one vector FMA per 16 elements.
inline float dot(const float* a, const float* b, int64_t n) {
  F32x16 acc = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) acc += load16(a + i) * load16(b + i);
  if (i < n) {
    F32x16 x = {}, y = {};
    for (int64_t l = 0; l < n - i; ++l) {
      x[l] = a[i + l];
      y[l] = b[i + l];
    }
    acc += x * y;
  }
  const F32x8 h8 = __builtin_shufflevector(acc, acc, 0, 1, 2, 3, 4, 5, 6, 7) +
                   __builtin_shufflevector(acc, acc, 8, 9, 10, 11, 12, 13, 14, 15);
  const F32x4 h4 = __builtin_shufflevector(h8, h8, 0, 1, 2, 3) + __builtin_shufflevector(h8, h8, 4, 5, 6, 7);
  return (h4[0] + h4[2]) + (h4[1] + h4[3]);
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

/// exp(x) for x <= 0 (softmax of max-shifted logits; -inf gives 0) in plain arithmetic so that loops over it
/// vectorise (libm's expf is a scalar call). Cephes expf: x = n·ln2 + r, |r| <= ln2/2, degree-6 polynomial,
/// scaled by 2^n through the exponent bits; max relative error about 2 ulp against std::exp.
/// Inputs below ln(FLT_MIN) = -87.33654 (including -inf) give 0 instead of a denormal.
inline float exp_nonpositive(float x) {
  const float n = std::nearbyint(x * 1.44269504088896341f);
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.f;
  const int32_t bits = (static_cast<int32_t>(x < -87.33654f ? 0.f : n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return x < -87.33654f ? 0.f : p * scale;
}

/// Per-thread scratch of at least n floats, reused across calls (grows, never shrinks). Valid until the
/// next call on the same thread; one region per kernel invocation, partitioned by the caller.
inline float* thread_scratch(size_t n) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < n) buffer.resize(n);
  return buffer.data();
}

/// Throws ShapeError "[op] what must be ..., got value" when value < min.
inline void check_at_least(const char* op, const char* what, int64_t value, int64_t min) {
  if (value < min)
    throw ShapeError(std::string("[") + op + "] " + what + " must be >= " + std::to_string(min) + ", got " +
                     std::to_string(value));
}

/// Throws ShapeError "[op] what must not be null" for a required pointer.
inline void check_not_null(const char* op, const char* what, const void* ptr) {
  if (ptr == nullptr) throw ShapeError(std::string("[") + op + "] " + what + " must not be null");
}

/// Calls f.template operator()<kD>() with kD = d_head for the common head widths (so the inner loops get
/// a compile-time trip count), kD = 0 (runtime width) otherwise.
template <class F>
inline void dispatch_d_head(int64_t d_head, F&& f) {
  switch (d_head) {
    case 32: f.template operator()<32>(); break;
    case 64: f.template operator()<64>(); break;
    default: f.template operator()<0>(); break;
  }
}

}  // namespace tn::kernel_detail
