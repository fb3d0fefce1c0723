#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/runtime/math/vec.h"

using namespace tn;

namespace {

/// n values x_i = (i mod 97) / 8 − 6: exact in f32, varied in sign.
std::vector<float> ramp(int64_t n, int shift) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>((i + shift) % 97) / 8.0f - 6.0f;
  return v;
}

}  // namespace

// Sizes below and above the threaded threshold (kParallelMinElements = 32768), and one not a
// multiple of any vector width; every expected value is the element-wise formula, computed here.
TEST_CASE("vec: add, mul-scale, accumulate, axpy and add-scalar equal their formulas") {
  for (int64_t n : {int64_t{0}, int64_t{37}, int64_t{32768 * 3 + 5}}) {
    const std::vector<float> a = ramp(n, 0), b = ramp(n, 11);
    std::vector<float> y(n, 99.0f);
    vec_add(a.data(), b.data(), y.data(), n);
    for (int64_t i = 0; i < n; ++i) REQUIRE(y[i] == a[i] + b[i]);
    vec_mul_scale(a.data(), b.data(), 0.5f, y.data(), n);
    for (int64_t i = 0; i < n; ++i) REQUIRE(y[i] == a[i] * b[i] * 0.5f);
    vec_mul_scale(a.data(), nullptr, -2.0f, y.data(), n);
    for (int64_t i = 0; i < n; ++i) REQUIRE(y[i] == a[i] * -2.0f);
    std::vector<float> acc = b;
    vec_accumulate(acc.data(), a.data(), n);
    for (int64_t i = 0; i < n; ++i) REQUIRE(acc[i] == b[i] + a[i]);
    // The ramp's values are multiples of 1/8 below 100, so a·x + y is exact, fused or not.
    acc = b;
    vec_axpy(acc.data(), 0.25f, a.data(), n);
    for (int64_t i = 0; i < n; ++i) REQUIRE(acc[i] == b[i] + 0.25f * a[i]);
    acc = b;
    vec_add_scalar(acc.data(), 1.0f, n);
    for (int64_t i = 0; i < n; ++i) REQUIRE(acc[i] == b[i] + 1.0f);
  }
}

TEST_CASE("vec: the output may be an input (in place)") {
  const int64_t n = 32768 * 2 + 3;
  std::vector<float> x = ramp(n, 5);
  const std::vector<float> f = ramp(n, 9), x0 = x;
  vec_mul_scale(x.data(), f.data(), 2.0f, x.data(), n);
  for (int64_t i = 0; i < n; ++i) REQUIRE(x[i] == x0[i] * f[i] * 2.0f);
  x = x0;
  vec_add(x.data(), x.data(), x.data(), n);
  for (int64_t i = 0; i < n; ++i) REQUIRE(x[i] == 2.0f * x0[i]);
}
