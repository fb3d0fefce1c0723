// cosformer_features: a hand-computed case (layout, sin half first, per-sequence M), fast f32
// against the double reference, finite differences, padding invariance, ReLU'(0) = 0.
// Legend: B batch, T seq_len, H n_heads, D d_head, M_b real length.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "layers/attention/kernels/cosformer_features.h"
#include "tests/layers/kernels/kernel_test_utils.h"

using namespace tn;
using namespace tn::kernel_test;

namespace {
constexpr double kTol = 1e-6;  // max-abs error / max(1, max|ref|), fast f32 vs double

/// N(0, 1) entries pushed away from 0 (|x| >= 0.1) so central differences never straddle the kink.
std::vector<float> away_from_zero(size_t n, std::mt19937& gen) {
  std::vector<float> x = random_normal(n, gen);
  for (float& v : x) v += v < 0 ? -0.1f : 0.1f;
  return x;
}
}  // namespace

TEST_CASE("cosformer_features: a hand-computed case") {
  // B 2, T 2, H 2, D 2. Sequence 0 has M = 2: a = π/4, π/2. Sequence 1 has M = 1: row 0 has
  // a = π/2, row 1 is padding. Per head: [relu(x)·sin a, relu(x)·cos a].
  const AttentionDims d{2, 2, 2, 2};
  const std::vector<float> x = {1, -2,   0.5f, 4,   // b 0, t 0: heads [1, -2], [0.5, 4]
                                3, 0.5f, -1,   2,   // b 0, t 1
                                2, 1,    0,    -3,  // b 1, t 0
                                5, 5,    5,    5};  // b 1, t 1 (padding)
  const int64_t lengths[] = {2, 1};
  const double r = std::sqrt(0.5);
  const std::vector<double> expected = {
      r, 0,   r, 0, 0.5 * r, 4 * r, 0.5 * r, 4 * r,  // sin π/4 = cos π/4
      3, 0.5, 0, 0, 0,       2,     0,       0,      // sin π/2 = 1, cos π/2 = 0
      2, 1,   0, 0, 0,       0,     0,       0,      // M = 1: a = π/2
      0, 0,   0, 0, 0,       0,     0,       0};     // padding
  std::vector<float> y(32, 7.f);
  cosformer_features_forward(d, lengths, x.data(), y.data());
  check_close("y", y, expected, 1e-7);
  // Without lengths both sequences have M = T = 2: b 1 row 0 has a = π/4.
  cosformer_features_forward({2, 2, 2, 2, 4}, nullptr, x.data(), y.data());  // d_key 2·D accepted
  CHECK(y[16] == doctest::Approx(2 * r).epsilon(1e-7));
  CHECK(y[18] == doctest::Approx(2 * r).epsilon(1e-7));
  CHECK(y[24] == doctest::Approx(5).epsilon(1e-7));  // b 1, t 1: a = π/2, sin half
  // dx = [x > 0]·(dy_sin sin a + dy_cos cos a); dy = 1 everywhere gives sin a + cos a.
  std::vector<float> dy(32, 1.f), dx(16, 7.f);
  cosformer_features_backward(d, lengths, x.data(), dy.data(), dx.data());
  const double s2 = 2 * r;  // sin π/4 + cos π/4
  check_close("dx", dx, std::vector<double>{s2, 0, s2, s2, 1, 1, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0},
              1e-7);
}

TEST_CASE("cosformer_features: fast f32 forward and backward equal the double reference") {
  std::mt19937 gen(71);
  for (int64_t D : {7, 8, 32})
    for (int64_t T : {1, 5, 40})
      for (bool with_lengths : {false, true}) {
        CAPTURE(D);
        CAPTURE(T);
        CAPTURE(with_lengths);
        const AttentionDims d{3, T, 2, D};
        const std::vector<int64_t> lengths = {T, T / 2, 0};
        const int64_t* lp = with_lengths ? lengths.data() : nullptr;
        const std::vector<float> x = random_normal(size_t(attention_numel(d)), gen);
        const std::vector<float> dy = random_normal(2 * x.size(), gen);
        std::vector<float> y(2 * x.size(), 7.f), dx(x.size(), 7.f);
        cosformer_features_forward(d, lp, x.data(), y.data());
        cosformer_features_backward(d, lp, x.data(), dy.data(), dx.data());
        const std::vector<double> xd = to_double(x), dyd = to_double(dy);
        std::vector<double> y_ref(y.size()), dx_ref(x.size());
        cosformer_features_forward_naive(d, lp, xd.data(), y_ref.data());
        cosformer_features_backward_naive(d, lp, xd.data(), dyd.data(), dx_ref.data());
        check_close("y", y, y_ref, kTol);
        check_close("dx", dx, dx_ref, kTol);
      }
}

TEST_CASE("cosformer_features: backward equals central differences of the double reference") {
  std::mt19937 gen(72);
  const AttentionDims d{2, 5, 2, 3};
  const int64_t lengths[] = {5, 3};
  for (const int64_t* lp : {static_cast<const int64_t*>(nullptr), lengths}) {
    const std::vector<float> x = away_from_zero(size_t(attention_numel(d)), gen);
    const std::vector<float> dy = random_normal(2 * x.size(), gen);
    std::vector<float> dx(x.size());
    cosformer_features_backward(d, lp, x.data(), dy.data(), dx.data());
    std::vector<double> xd = to_double(x), y(dy.size());
    const std::vector<double> weights = to_double(dy);
    auto loss = [&] {
      cosformer_features_forward_naive(d, lp, xd.data(), y.data());
      return weighted_sum(weights, y);
    };
    check_close("dx vs finite differences", dx, finite_difference(xd, loss), 1e-6);
  }
}

TEST_CASE(
    "cosformer_features: a padded sequence's real rows equal the unpadded ones, bit for bit") {
  std::mt19937 gen(73);
  const int64_t M = 13, T = 20, H = 2, D = 8;
  const AttentionDims d{1, M, H, D}, dp{1, T, H, D};
  std::vector<float> x = random_normal(size_t(attention_numel(d)), gen);
  std::vector<float> xp = x;
  const std::vector<float> junk = random_normal(size_t((T - M) * H * D), gen);
  xp.insert(xp.end(), junk.begin(), junk.end());
  const int64_t length[] = {M};
  std::vector<float> y(2 * x.size()), yp(2 * xp.size(), 7.f);
  cosformer_features_forward(d, nullptr, x.data(), y.data());
  cosformer_features_forward(dp, length, xp.data(), yp.data());
  CHECK(std::equal(y.begin(), y.end(), yp.begin()));
  for (size_t i = y.size(); i < yp.size(); ++i) CHECK(yp[i] == 0.f);
  const std::vector<float> dy = random_normal(yp.size(), gen);
  std::vector<float> dx(x.size()), dxp(xp.size(), 7.f);
  cosformer_features_backward(d, nullptr, x.data(), dy.data(), dx.data());
  cosformer_features_backward(dp, length, xp.data(), dy.data(), dxp.data());
  CHECK(std::equal(dx.begin(), dx.end(), dxp.begin()));
  for (size_t i = dx.size(); i < dxp.size(); ++i) CHECK(dxp[i] == 0.f);
}

TEST_CASE("cosformer_features: ReLU'(0) = 0 and negative inputs give zero gradient") {
  const AttentionDims d{1, 1, 1, 3};
  const std::vector<float> x = {0.f, -0.f, -1.f}, dy(6, 1.f);
  std::vector<float> y(6, 7.f), dx(3, 7.f);
  cosformer_features_forward(d, nullptr, x.data(), y.data());
  cosformer_features_backward(d, nullptr, x.data(), dy.data(), dx.data());
  for (float v : y) CHECK(v == 0.f);
  for (float v : dx) CHECK(v == 0.f);
}

TEST_CASE("cosformer_features: bad arguments throw ShapeError naming the op") {
  std::vector<float> x(16), y(32);
  const int64_t too_long[] = {3}, negative[] = {-1};
  CHECK_THROWS_WITH(cosformer_features_forward({1, 2, 1, 4}, too_long, x.data(), y.data()),
                    doctest::Contains("[cosformer_features_forward] lengths[0]"));
  CHECK_THROWS_AS(cosformer_features_backward({1, 2, 1, 4}, negative, x.data(), y.data(), x.data()),
                  ShapeError);
  CHECK_THROWS_WITH(cosformer_features_forward({1, 2, 1, 4, 4}, nullptr, x.data(), y.data()),
                    doctest::Contains("dims.d_key must be 0 or 2"));
}
