// Vectorisable exp and row maximum (core/runtime/math) against libm and std::max_element.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/runtime/math/fast_exp.h"
#include "core/runtime/math/row_max.h"

using namespace tn;

TEST_CASE("round_nearest: std::nearbyint's integer, ties to even, over |v| < 2^22") {
  CHECK(round_nearest(0.5f) == 0.f);  // ties go to the even neighbour, by hand
  CHECK(round_nearest(1.5f) == 2.f);
  CHECK(round_nearest(2.5f) == 2.f);
  CHECK(round_nearest(-2.5f) == -2.f);
  CHECK(round_nearest(-0.49999997f) == 0.f);
  CHECK(round_nearest(126.7f) == 127.f);
  int wrong = 0;
  for (float v = -200.f; v <= 200.f; v += 0.0625f) wrong += round_nearest(v) != std::nearbyint(v);
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> any(-4.0e6f, 4.0e6f);
  for (int i = 0; i < 100000; ++i) {
    const float v = any(gen);
    wrong += round_nearest(v) != std::nearbyint(v);
  }
  CHECK(wrong == 0);
}

TEST_CASE("exp_nonpositive: within 3 ulp of std::exp on [-87, 0], 0 below, exp(-inf) = 0") {
  double worst = 0;
  for (float x = -87.f; x <= 0.f; x += 0.00731f) {
    const double ref = std::exp(double(x));
    worst = std::max(worst, std::abs(double(exp_nonpositive(x)) - ref) / ref);
  }
  CHECK(worst < 3 * 0x1p-24);
  CHECK(exp_nonpositive(0.f) == 1.f);
  CHECK(exp_nonpositive(-88.f) == 0.f);
  CHECK(exp_nonpositive(-INFINITY) == 0.f);
}

TEST_CASE("exp_float: within 3 ulp of std::exp over the float range, inf/0/NaN at the ends") {
  double worst = 0;  // relative error
  for (float x = -87.f; x <= 88.7f; x += 0.0137f) {
    const double ref = std::exp(double(x));
    worst = std::max(worst, std::abs(double(exp_float(x)) - ref) / ref);
  }
  CHECK(worst < 3 * 0x1p-24);
  CHECK(exp_float(0.f) == 1.f);
  CHECK(exp_float(88.72f) == doctest::Approx(std::exp(double(88.72f))).epsilon(1e-6));  // n = 128
  CHECK(std::isinf(exp_float(89.f)));
  CHECK(std::isinf(exp_float(INFINITY)));
  CHECK(exp_float(-88.f) == 0.f);
  CHECK(exp_float(-INFINITY) == 0.f);
  CHECK(std::isnan(exp_float(NAN)));
}

TEST_CASE("row_max: equals std::max_element for every length around the 16 lanes, skips NaN") {
  std::mt19937 gen(5);
  std::normal_distribution<float> normal;
  for (int64_t n = 1; n <= 70; ++n) {
    std::vector<float> x(n);
    for (float& v : x) v = normal(gen) - 100.f;
    const int64_t where = (n * 13) % n;
    x[where] = 3.f;  // the maximum in every position of lanes and tail
    CHECK(row_max(x.data(), n) == 3.f);
    CHECK(row_max(x.data(), n) == *std::max_element(x.begin(), x.end()));
  }
  CHECK(std::isinf(row_max(nullptr, 0)));
  std::vector<float> with_nan = {1.f, NAN, 2.f};
  CHECK(row_max(with_nan.data(), 3) == 2.f);
}
