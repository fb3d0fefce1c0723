// relative_position (URPE / RoPE): fast form against the per-element naive form, finite differences
// for x and theta, the relative-offset property, periodic positions. Legend: B batch, T seq_len, H
// n_heads, D d_head, M = D/2.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "layers/attention/kernels/relative_position.h"
#include "tests/layers/kernels/kernel_test_utils.h"

using namespace tn;
using namespace tn::kernel_test;

namespace {
// Tolerances: max-abs error / max(1, max|ref|); x, dy ~ N(0, 1).
constexpr double kTolForward = 1e-6;  // fast f32 vs naive (same f32 angle, double trig)
constexpr double kTolFiniteDiff =
    2e-6;  // fast f32 backward (dx, d_theta) vs central differences in f64
constexpr double kTolOffset = 1e-5;  // spread of q'·k' over pairs with the same offset, / (|q||k|)

std::vector<float> rope_theta(int64_t D) {
  std::vector<float> theta(size_t(D / 2));
  for (int64_t m = 0; m < D / 2; ++m)
    theta[size_t(m)] = float(std::pow(10000.0, -2.0 * double(m) / double(D)));
  return theta;
}

std::vector<float> unit_vector(int64_t D, std::mt19937& gen) {
  std::vector<float> v = random_normal(size_t(D), gen);
  double norm = 0;
  for (float x : v) norm += double(x) * x;
  for (float& x : v) x = float(x / std::sqrt(norm));
  return v;
}

}  // namespace

TEST_CASE("relative_position: fast form equals the naive per-element form") {
  std::mt19937 gen(41);
  for (int64_t D : {32, 60})
    for (int64_t T : {1, 63, 65})
      for (int64_t period : {0, 8})
        for (bool urpe : {false, true}) {
          CAPTURE(D);
          CAPTURE(T);
          CAPTURE(period);
          CAPTURE(urpe);
          const AttentionDims d{2, T, 3, D};
          const std::vector<float> x = random_normal(size_t(attention_numel(d)), gen),
                                   theta = rope_theta(D), v = unit_vector(D, gen);
          const float* hh = urpe ? v.data() : nullptr;
          std::vector<float> y(x.size()), y_ref(x.size());
          relative_position_forward(d, theta.data(), hh, period, x.data(), y.data());
          relative_position_forward_naive(d, theta.data(), hh, period, x.data(), y_ref.data());
          check_close("y", y, y_ref, kTolForward);
        }
}

TEST_CASE("relative_position: backward (dx and accumulated d_theta) equals central differences") {
  std::mt19937 gen(42);
  const AttentionDims d{1, 5, 2, 4};
  for (int64_t period : {0, 3})
    for (bool urpe : {false, true}) {
      CAPTURE(period);
      CAPTURE(urpe);
      const size_t n = size_t(attention_numel(d));
      const std::vector<float> x = random_normal(n, gen), dy = random_normal(n, gen),
                               hv = unit_vector(4, gen);
      const std::vector<float> theta = random_normal(2, gen);  // learned angles: any values
      const float* hh = urpe ? hv.data() : nullptr;
      std::vector<float> dx(n, 7.f), d_theta = {0.25f, -0.5f};
      relative_position_backward(d, theta.data(), hh, period, x.data(), dy.data(), dx.data(),
                                 d_theta.data());
      d_theta[0] -= 0.25f;  // d_theta is accumulated into
      d_theta[1] += 0.5f;
      std::vector<double> xd = to_double(x), td = to_double(theta), y(n);
      const std::vector<double> hd = to_double(hv), w = to_double(dy);
      auto loss = [&] {
        relative_position_forward_naive(d, td.data(), urpe ? hd.data() : nullptr, period, xd.data(),
                                        y.data());
        return weighted_sum(w, y);
      };
      check_close("dx vs finite differences", dx, finite_difference(xd, loss), kTolFiniteDiff);
      check_close("d_theta vs finite differences", d_theta, finite_difference(td, loss),
                  kTolFiniteDiff);
      // Without d_theta, dx is unchanged.
      std::vector<float> dx2(n);
      relative_position_backward(d, theta.data(), hh, period, x.data(), dy.data(), dx2.data(),
                                 nullptr);
      CHECK(dx2 == dx);
    }
}

TEST_CASE("relative_position: q'·k' depends only on the offset j - i (RoPE and URPE)") {
  std::mt19937 gen(43);
  const int64_t T = 40, D = 16;
  const AttentionDims d{1, T, 1, D};
  for (bool urpe : {false, true}) {
    CAPTURE(urpe);
    const std::vector<float> qv = random_normal(size_t(D), gen), kv = random_normal(size_t(D), gen),
                             hv = unit_vector(D, gen);
    std::vector<float> theta = rope_theta(D);
    if (urpe)
      for (float& t : theta) t *= 1.3f;  // learned angles move away from the RoPE init
    std::vector<float> xq(size_t(T * D)), xk(size_t(T * D)), yq(xq.size()), yk(xk.size());
    for (int64_t t = 0; t < T; ++t)
      for (int64_t e = 0; e < D; ++e) {
        xq[size_t(t * D + e)] = qv[size_t(e)];
        xk[size_t(t * D + e)] = kv[size_t(e)];
      }
    relative_position_forward(d, theta.data(), urpe ? hv.data() : nullptr, 0, xq.data(), yq.data());
    relative_position_forward(d, theta.data(), urpe ? hv.data() : nullptr, 0, xk.data(), yk.data());
    double qn = 0, kn = 0;
    for (int64_t e = 0; e < D; ++e) {
      qn += double(qv[size_t(e)]) * qv[size_t(e)];
      kn += double(kv[size_t(e)]) * kv[size_t(e)];
    }
    double worst = 0;
    for (int64_t offset = -(T - 1); offset < T; ++offset) {
      double lo = INFINITY, hi = -INFINITY;
      for (int64_t i = 0; i < T; ++i) {
        const int64_t j = i + offset;
        if (j < 0 || j >= T) continue;
        double s = 0;
        for (int64_t e = 0; e < D; ++e) s += double(yq[size_t(i * D + e)]) * yk[size_t(j * D + e)];
        lo = std::min(lo, s);
        hi = std::max(hi, s);
      }
      worst = std::max(worst, (hi - lo) / std::sqrt(qn * kn));
    }
    CHECK_MESSAGE(worst <= kTolOffset, "spread of q'.k' at a fixed offset: " << worst);
  }
}

TEST_CASE("relative_position: with a period, position t is encoded as t % period") {
  std::mt19937 gen(44);
  const int64_t P = 8, T = 21, H = 2, D = 8;
  const AttentionDims d{1, T, H, D};
  const std::vector<float> x = random_normal(size_t(T * H * D), gen), theta = rope_theta(D),
                           hv = unit_vector(D, gen);
  std::vector<float> y(x.size()), y_block(x.size());
  relative_position_forward(d, theta.data(), hv.data(), P, x.data(), y.data());
  for (int64_t s0 = 0; s0 < T; s0 += P) {  // each block on its own with positions 0..P-1
    const int64_t n = std::min(P, T - s0);
    relative_position_forward({1, n, H, D}, theta.data(), hv.data(), 0, x.data() + s0 * H * D,
                              y_block.data() + s0 * H * D);
  }
  CHECK(y == y_block);
}

TEST_CASE("relative_position: odd d_head throws ShapeError naming the op") {
  std::vector<float> x(6), theta(3);
  CHECK_THROWS_WITH_AS(
      relative_position_forward({1, 2, 1, 3}, theta.data(), nullptr, 0, x.data(), x.data()),
      doctest::Contains("[relative_position_forward] d_head must be even"), ShapeError);
}
