// The attention kernels' shared dot products and row accumulators (kernel_utils.h): the same bits
// for every vector width (float arrays, F32x4, F32x8, F32x16), for dot, dot4 and row_dots alike,
// and the fixed 16-lane tree written out by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "layers/attention/kernels/kernel_utils.h"

using namespace tn;
using namespace tn::kernel_detail;

namespace {

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> x(n);
  for (float& e : x) e = u(gen);
  return x;
}

/// The documented order, literally: lane i % 16 accumulates a[i]·b[i]; halves added 16 -> 8 -> 4;
/// then (h[0] + h[2]) + (h[1] + h[3]).
float dot_by_hand(const float* a, const float* b, int64_t n) {
  float lane[16] = {};
  for (int64_t i = 0; i < n; ++i) lane[i % 16] += a[i] * b[i];
  float h8[8], h4[4];
  for (int l = 0; l < 8; ++l) h8[l] = lane[l] + lane[l + 8];
  for (int l = 0; l < 4; ++l) h4[l] = h8[l] + h8[l + 4];
  return (h4[0] + h4[2]) + (h4[1] + h4[3]);
}

uint32_t bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

}  // namespace

TEST_CASE("kernel dot: every vector width gives the bits of the 16-lane tree written by hand") {
  const std::vector<float> a = random_floats(200, 1), b = random_floats(200, 2);
  for (int64_t n : {0, 1, 5, 15, 16, 17, 31, 32, 33, 64, 100, 200}) {
    CAPTURE(n);
    const float hand = dot_by_hand(a.data(), b.data(), n);
    CHECK(bits(dot<float>(a.data(), b.data(), n)) == bits(hand));
    CHECK(bits(dot<F32x4>(a.data(), b.data(), n)) == bits(hand));
    CHECK(bits(dot<F32x8>(a.data(), b.data(), n)) == bits(hand));
    CHECK(bits(dot<F32x16>(a.data(), b.data(), n)) == bits(hand));
    double exact = 0;
    for (int64_t i = 0; i < n; ++i) exact += double(a[i]) * double(b[i]);
    CHECK(std::abs(hand - exact) <= 1e-6 * (1 + std::abs(exact)));  // f32 sums of <= 13 terms
  }
}

TEST_CASE("kernel sum: the bits of dot against ones, for every width, and zeros change nothing") {
  const std::vector<float> a = random_floats(200, 3), ones(200, 1.f);
  for (int64_t n : {0, 1, 15, 16, 17, 33, 100, 200}) {
    CAPTURE(n);
    // lane += a·1 is lane += a exactly, so sum must give dot's 16-lane tree bit for bit
    const float hand = dot_by_hand(a.data(), ones.data(), n);
    CHECK(bits(sum<float>(a.data(), n)) == bits(hand));
    CHECK(bits(sum<F32x4>(a.data(), n)) == bits(hand));
    CHECK(bits(sum<F32x8>(a.data(), n)) == bits(hand));
    CHECK(bits(sum<F32x16>(a.data(), n)) == bits(hand));
    std::vector<float> padded(a.begin(), a.begin() + n);
    padded.resize(size_t(n + 23), 0.f);  // a row padded with zeros sums to the same bits
    CHECK(bits(sum<float>(padded.data(), n + 23)) == bits(hand));
  }
}

TEST_CASE("kernel dot64: the same bits for every width, zeros change nothing, null b sums") {
  const std::vector<float> a = random_floats(300, 5), b = random_floats(300, 6), ones(300, 1.f);
  for (int64_t n : {0, 1, 15, 16, 17, 63, 64, 65, 130, 300}) {
    CAPTURE(n);
    const float ref = dot64<float>(a.data(), b.data(), n);
    CHECK(bits(dot64<F32x4>(a.data(), b.data(), n)) == bits(ref));
    CHECK(bits(dot64<F32x8>(a.data(), b.data(), n)) == bits(ref));
    CHECK(bits(dot64<F32x16>(a.data(), b.data(), n)) == bits(ref));
    double exact = 0;
    for (int64_t i = 0; i < n; ++i) exact += double(a[i]) * double(b[i]);
    CHECK(std::abs(ref - exact) <= 1e-5 * (1 + std::abs(exact)));  // f32 sums of <= 300 terms
    // b null is Σ a, the bits of a·1 (lane += a·1 is lane += a exactly).
    CHECK(bits(dot64<float>(a.data(), nullptr, n)) == bits(dot64<float>(a.data(), ones.data(), n)));
    CHECK(bits(dot64<F32x16>(a.data(), nullptr, n)) == bits(dot64<float>(a.data(), ones.data(), n)));
    std::vector<float> pa(a.begin(), a.begin() + n), pb(b.begin(), b.begin() + n);
    pa.resize(size_t(n + 71), 0.f);  // a row padded with zeros gives the same bits
    pb.resize(size_t(n + 71), 0.f);
    CHECK(bits(dot64<float>(pa.data(), pb.data(), n + 71)) == bits(ref));
  }
}

TEST_CASE("kernel dot: dot4 and row_dots give the bits of dot, row by row, for every width") {
  const int64_t rows = 7, stride = 40;
  const std::vector<float> a = random_floats(40, 3), m = random_floats(rows * stride, 4);
  for (int64_t n : {1, 16, 23, 40}) {
    CAPTURE(n);
    std::vector<float> want(rows), got(rows);
    for (int64_t r = 0; r < rows; ++r) want[r] = dot_by_hand(a.data(), m.data() + r * stride, n);
    auto same = [&] {
      for (int64_t r = 0; r < rows; ++r) CHECK(bits(got[r]) == bits(want[r]));
    };
    row_dots<float>(a.data(), m.data(), stride, rows, n, got.data());
    same();
    row_dots<F32x4>(a.data(), m.data(), stride, rows, n, got.data());
    same();
    row_dots<F32x8>(a.data(), m.data(), stride, rows, n, got.data());
    same();
    row_dots<F32x16>(a.data(), m.data(), stride, rows, n, got.data());
    same();
  }
}

namespace {
template <int kD, class V>
std::vector<float> accumulate(const std::vector<float>& coef, const std::vector<float>& x,
                              int64_t d) {
  std::vector<float> scratch(d), out(d);
  RowAcc<kD, V> acc(scratch.data(), d);
  acc.load(x.data());  // start from row 0, then add the others
  for (size_t i = 1; i < coef.size(); ++i) acc.add(coef[i], x.data() + i * d);
  acc.store(out.data());
  return out;
}
}  // namespace

TEST_CASE("kernel dot: RowAcc in registers of any width or in scratch gives the same bits") {
  const int64_t d = 64, n = 9;
  const std::vector<float> coef = random_floats(n, 5), x = random_floats(n * d, 6);
  const std::vector<float> want = accumulate<0, float>(coef, x, d);
  for (int64_t e = 0; e < d; ++e) {  // row[e] = x0[e] + Σ_i c_i x_i[e], in order, by hand
    float r = x[e];
    for (int64_t i = 1; i < n; ++i) r += coef[i] * x[i * d + e];
    CHECK(bits(want[e]) == bits(r));
  }
  CHECK(accumulate<64, F32x4>(coef, x, d) == want);
  CHECK(accumulate<64, F32x8>(coef, x, d) == want);
  CHECK(accumulate<64, F32x16>(coef, x, d) == want);
}

namespace {
/// Four rows accumulated with RowsAcc<64, V, 4>: rows start from x_r, then add_rows over the
/// shared inputs y_t (coefficients c[t][r]), then one more add() per row of its own input.
template <class V>
std::vector<float> accumulate_rows(const std::vector<float>& c, const std::vector<float>& x,
                                   const std::vector<float>& y, int64_t n) {
  const int64_t d = 64;
  std::vector<float> out(size_t(4 * d));
  RowsAcc<64, V, 4> acc(nullptr, d);
  for (int r = 0; r < 4; ++r) acc.load(r, x.data() + r * d);
  for (int64_t t = 0; t < n; ++t)
    acc.add_rows([&](int r) { return c[size_t(t * 4 + r)]; }, y.data() + t * d);
  for (int r = 0; r < 4; ++r) acc.add(r, 0.5f + float(r), x.data() + ((r + 1) % 4) * d);
  for (int r = 0; r < 4; ++r) acc.store(r, out.data() + r * d);
  return out;
}
}  // namespace

TEST_CASE("kernel dot: RowsAcc (four rows in registers) gives each row the bits of RowAcc alone") {
  const int64_t d = 64, n = 11;
  const std::vector<float> c = random_floats(size_t(4 * n), 7), x = random_floats(4 * d, 8),
                           y = random_floats(size_t(n * d), 9);
  std::vector<float> want(size_t(4 * d));
  for (int r = 0; r < 4; ++r) {  // one row at a time, as the kernels did before RowsAcc
    RowAcc<0, float> acc(want.data() + r * d, d);
    acc.load(x.data() + r * d);
    for (int64_t t = 0; t < n; ++t) acc.add(c[size_t(t * 4 + r)], y.data() + t * d);
    acc.add(0.5f + float(r), x.data() + ((r + 1) % 4) * d);
  }
  CHECK(accumulate_rows<F32x4>(c, x, y, n) == want);
  CHECK(accumulate_rows<F32x8>(c, x, y, n) == want);
  CHECK(accumulate_rows<F32x16>(c, x, y, n) == want);
  CHECK(accumulate_rows<float>(c, x, y, n) == want);
}
