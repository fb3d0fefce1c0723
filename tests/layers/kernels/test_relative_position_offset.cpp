// relative_position with a position offset (incremental decoding encodes one row at a time at its
// absolute position): rows encoded at offset o are bit-identical to rows o.. of the whole sequence,
// with and without a period, in the fast, naive and backward forms; offset 0 is the default.
// Legend: B batch, T seq_len, H n_heads, D d_head.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "layers/attention/kernels/relative_position.h"
#include "tests/layers/kernels/kernel_test_utils.h"

using namespace tn;
using namespace tn::kernel_test;

TEST_CASE("relative_position: offset o on a suffix equals rows o.. of the whole sequence, bit for bit") {
  std::mt19937 gen(17);
  const int64_t H = 2, D = 16, T = 70;
  std::vector<float> theta(D / 2), householder = random_normal(D, gen);
  for (int64_t m = 0; m < D / 2; ++m) theta[m] = float(std::pow(10000.0, -2.0 * double(m) / D));
  for (int64_t period : {0, 8})
    for (bool urpe : {false, true}) {
      CAPTURE(period);
      CAPTURE(urpe);
      const float* hh = urpe ? householder.data() : nullptr;
      const AttentionDims whole{1, T, H, D};
      const std::vector<float> x = random_normal(size_t(attention_numel(whole)), gen);
      std::vector<float> y(x.size()), y_naive(x.size());
      relative_position_forward(whole, theta.data(), hh, period, x.data(), y.data());
      relative_position_forward_naive(whole, theta.data(), hh, period, x.data(), y_naive.data());
      for (int64_t offset : {int64_t{1}, int64_t{9}, int64_t{64}, T - 1}) {
        CAPTURE(offset);
        const AttentionDims rest{1, T - offset, H, D};
        const float* x_rest = x.data() + offset * H * D;
        std::vector<float> got(size_t(attention_numel(rest))), got_naive(got.size());
        relative_position_forward(rest, theta.data(), hh, period, x_rest, got.data(), offset);
        relative_position_forward_naive(rest, theta.data(), hh, period, x_rest, got_naive.data(),
                                        offset);
        CHECK(std::memcmp(got.data(), y.data() + offset * H * D, got.size() * sizeof(float)) == 0);
        CHECK(std::memcmp(got_naive.data(), y_naive.data() + offset * H * D,
                          got.size() * sizeof(float)) == 0);
        // The backward with the same offset: dx of the suffix equals dx of the whole at those rows.
        const std::vector<float> dy = random_normal(got.size(), gen);
        std::vector<float> dy_whole(x.size(), 0.f), dx_whole(x.size()), dx(got.size());
        std::copy(dy.begin(), dy.end(), dy_whole.begin() + offset * H * D);
        relative_position_backward(whole, theta.data(), hh, period, x.data(), dy_whole.data(),
                                   dx_whole.data(), nullptr);
        relative_position_backward(rest, theta.data(), hh, period, x_rest, dy.data(), dx.data(),
                                   nullptr, offset);
        CHECK(std::memcmp(dx.data(), dx_whole.data() + offset * H * D, dx.size() * sizeof(float)) ==
              0);
      }
    }
  const AttentionDims one{1, 1, H, D};
  std::vector<float> x(H * D, 1.f), y(x.size());
  CHECK_THROWS_AS(relative_position_forward(one, theta.data(), nullptr, 0, x.data(), y.data(), -1),
                  ShapeError);
}
