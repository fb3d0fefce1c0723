#pragma once
// Vectorisable exp for softmax-style loops (libm's expf is a scalar call, so loops over it do not
// vectorise; these are plain arithmetic that GCC turns into AVX2 or AVX-512 code).
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace tn {

/// cond ? a : b as a bitwise blend of the two values (both are computed). Why not `?:`: GCC's PRE
/// pass turns a float select whose result is then used, or that picks a computed product, into a
/// branch holding the product; under the default -ftrapping-math a floating-point operation in a
/// branch is only if-converted with AVX-512 masks, so on AVX2 the whole loop silently stayed scalar
/// (and an `omp simd` sum over it ran in order, one lane). The blend is integer arithmetic, which
/// the vectoriser takes on any x86 vector width.
inline float select_float(bool cond, float a, float b) {
  const uint32_t mask = 0u - static_cast<uint32_t>(cond);
  return std::bit_cast<float>((std::bit_cast<uint32_t>(a) & mask) |
                              (std::bit_cast<uint32_t>(b) & ~mask));
}

/// v rounded to the nearest integer, ties to even, for |v| < 2^22 (the rounding mode's, as
/// std::nearbyint): adding 1.5·2^23 leaves no fraction bits, subtracting it back gives the integer.
/// Plain arithmetic, so it vectorises on the x86-64 baseline too, where std::nearbyint (SSE4.1's
/// roundps) is a libm call per element that kept the exp loops scalar.
inline float round_nearest(float v) {
  constexpr float kShift = 12582912.f;  // 1.5·2^23
  return (v + kShift) - kShift;
}

/// exp(r') for the reduced argument of x = n·ln2 + r' (Cephes expf): r' = x − n·ln2 in two steps
/// (ln2 split into a high and a low part), then the degree-6 polynomial. |x − n·ln2| <= ln2/2.
inline float exp_reduced(float x, float n) {
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  return p * r * r + r + 1.f;
}

/// exp(x) for x <= 0 (softmax of max-shifted logits; -inf gives 0) in plain arithmetic so that
/// loops over it vectorise (libm's expf is a scalar call). Cephes expf: x = n·ln2 + r, |r| <=
/// ln2/2, degree-6 polynomial, scaled by 2^n through the exponent bits; max relative error about 2
/// ulp against std::exp. Inputs below ln(FLT_MIN) = -87.33654 (including -inf) give 0 instead of a
/// denormal.
inline float exp_nonpositive(float x) {
  const float n = round_nearest(x * 1.44269504088896341f);
  const float p = exp_reduced(x, n);
  const bool under = x < -87.33654f;
  // n is NaN for a NaN x (the result is then NaN through p); casting NaN to int is undefined.
  const int32_t bits = (static_cast<int32_t>(select_float(under || n != n, 0.f, n)) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return select_float(under, 0.f, p * scale);
}

/// exp(x) for any float x in plain arithmetic (vectorisable, unlike libm's scalar expf): the
/// exp_nonpositive polynomial with the scale 2^n split so that n = 128 stays representable. Inputs
/// above ln(FLT_MAX) = 88.72284 give +inf, below -87.33654 give 0 (no denormals); NaN gives NaN.
/// Max relative error about 2 ulp against std::exp.
inline float exp_float(float x) {
  const bool over = x > 88.72283f, under = x < -87.33654f;
  const float xc = select_float(over, 88.72283f, select_float(under, -87.33654f, x));
  const float n = round_nearest(xc * 1.44269504088896341f);
  const float p = exp_reduced(xc, n);
  const bool big = n > 127.f;  // 2^128 = 2·2^127
  const int32_t bits = (static_cast<int32_t>(select_float(big, 127.f, select_float(n != n, 0.f, n))) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  const float y = select_float(big, 2.f * p, p) * scale;
  return select_float(over, std::numeric_limits<float>::infinity(),
                      select_float(under, 0.f, select_float(x != x, x, y)));
}

}  // namespace tn
