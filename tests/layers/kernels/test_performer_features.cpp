// performer_features: a hand-computed case, fast f32 against the double reference, finite
// differences with the stabiliser held fixed, padding and causality, and the orthogonal random
// features (structure, distribution, torch's QR convention). Legend: B batch, T seq_len, H n_heads,
// D d_head, M features.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "layers/attention/kernels/kernel_utils.h"
#include "layers/attention/kernels/performer_features.h"
#include "tests/layers/kernels/kernel_test_utils.h"

using namespace tn;
using namespace tn::kernel_test;

namespace {
// Tolerances: max-abs error / max(1, max|ref|).
constexpr double kTolForward = 2e-6;     // fast f32 vs double reference
constexpr double kTolBackward = 2e-6;    // fast f32 backward vs double reference backward
constexpr double kTolFiniteDiff = 2e-6;  // fast f32 backward vs central differences (double)
constexpr double kEps = 1e-4;            // feature_eps (the reference default)

enum class Mode { Query, EncoderKey, DecoderKey };
constexpr Mode kModes[] = {Mode::Query, Mode::EncoderKey, Mode::DecoderKey};
bool is_query(Mode mode) { return mode == Mode::Query; }
bool causal(Mode mode) { return mode == Mode::DecoderKey; }

struct Run {
  std::vector<float> phi, stabiliser;
};

Run fast_forward(const AttentionDims& d, int64_t m, const std::vector<float>& w, Mode mode,
                 const uint8_t* valid, const std::vector<float>& x) {
  const size_t rows = size_t(d.batch * d.seq_len * d.n_heads);
  Run r{std::vector<float>(rows * size_t(m), 7.f), std::vector<float>(rows, 7.f)};
  performer_features_forward(d, m, w.data(), is_query(mode), causal(mode), valid, kEps, x.data(),
                             r.phi.data(), r.stabiliser.data());
  return r;
}

}  // namespace

TEST_CASE("performer_features: a hand-computed case (d_head 4: c = 1/sqrt 2, c^2 = 1/2)") {
  // w_0 = e_0, w_1 = 2 e_1. x_0 = [1, 0, -1, 2]: (c x_0)·w = [c, 0], c²‖x_0‖²/2 = 1.5.
  // x_1 = [0, 1, 1, 0]: (c x_1)·w = [0, 2c], c²‖x_1‖²/2 = 0.5. M^(-1/2) = 1/sqrt 2 = c.
  const AttentionDims d{1, 2, 1, 4};
  const std::vector<float> w = {1, 0, 0, 0, 0, 2, 0, 0};
  const std::vector<float> x = {1, 0, -1, 2, 0, 1, 1, 0};
  const double c = 1 / std::sqrt(2.0);
  auto phi = [&](double u) { return c * std::exp(u) + kEps; };
  struct Expect {
    Mode mode;
    const uint8_t* valid;
    std::vector<double> phi, stabiliser;
  };
  const uint8_t second_padded[] = {1, 0};
  const Expect cases[] = {
      // Queries: own row max.
      {Mode::Query,
       nullptr,
       {phi(c - 1.5 - c), phi(-1.5 - c), phi(-0.5 - 2 * c), phi(2 * c - 0.5 - 2 * c)},
       {c, 2 * c}},
      // Encoder keys: max over both rows and both features = 2c.
      {Mode::EncoderKey,
       nullptr,
       {phi(c - 1.5 - 2 * c), phi(-1.5 - 2 * c), phi(-0.5 - 2 * c), phi(2 * c - 0.5 - 2 * c)},
       {2 * c, 2 * c}},
      // Encoder keys with row 1 padded: shared max over row 0 only; row 1 uses its own max.
      {Mode::EncoderKey,
       second_padded,
       {phi(c - 1.5 - c), phi(-1.5 - c), phi(-0.5 - 2 * c), phi(2 * c - 0.5 - 2 * c)},
       {c, 2 * c}},
      // Decoder keys: s = 0.
      {Mode::DecoderKey, nullptr, {phi(c - 1.5), phi(-1.5), phi(-0.5), phi(2 * c - 0.5)}, {0, 0}},
  };
  for (const Expect& e : cases) {
    CAPTURE(int(e.mode));
    const Run r = fast_forward(d, 2, w, e.mode, e.valid, x);
    check_close("phi", r.phi, e.phi, 1e-6);
    check_close("stabiliser", r.stabiliser, e.stabiliser, 1e-7);
  }
  // Backward of the query row 0 with d_phi = [1, 0] (row 1 gets d_phi 0):
  // dx_0 = (phi_0 − eps)·(c w_0 − c² x_0) = c e^(−1.5)·([c, 0, 0, 0] − [0.5, 0, −0.5, 1]).
  const Run q = fast_forward(d, 2, w, Mode::Query, nullptr, x);
  const std::vector<float> d_phi = {1, 0, 0, 0};
  std::vector<float> dx(8, 7.f);
  performer_features_backward(d, 2, w.data(), x.data(), q.phi.data(), kEps, d_phi.data(),
                              dx.data());
  const double a = c * std::exp(-1.5);
  check_close("dx", dx, std::vector<double>{a * (c - 0.5), 0, a * 0.5, -a, 0, 0, 0, 0}, 1e-6);
}

TEST_CASE("performer_features: fast f32 forward and backward equal the double reference") {
  std::mt19937 gen(61);
  // (D, M): m > d (two blocks), the golden m 16 at d_head 32, the default m 64, odd sizes, and
  // sizes of one 16-wide register block plus a tail (M 20 forward, D 20 backward).
  const int64_t shapes[][2] = {{8, 16}, {32, 16}, {32, 64}, {7, 12}, {16, 20}, {20, 16}};
  for (const auto& shape : shapes) {
    const int64_t D = shape[0], M = shape[1];
    for (int64_t T : {1, 13})
      for (Mode mode : kModes)
        for (bool padded : {false, true}) {
          if (padded && mode != Mode::EncoderKey) continue;
          CAPTURE(D);
          CAPTURE(M);
          CAPTURE(T);
          CAPTURE(int(mode));
          CAPTURE(padded);
          const AttentionDims d{2, T, 2, D,
                                M};  // d_key = M is accepted (the linear_attention dims)
          const std::vector<float> w = performer_orthogonal_features(2, M, D, uint64_t(D * M + T));
          const std::vector<float> x = random_normal(size_t(attention_numel(d)), gen);
          std::vector<uint8_t> valid(size_t(2 * T), 1);
          if (padded) valid[size_t(T - 1)] = valid[size_t(T)] = 0;  // b 0: last row, b 1: first
          const uint8_t* vp = padded ? valid.data() : nullptr;
          const Run r = fast_forward(d, M, w, mode, vp, x);
          const size_t rows = r.stabiliser.size();
          std::vector<double> phi_ref(r.phi.size()), stab_ref(rows);
          const std::vector<double> xd = to_double(x);
          performer_features_forward_naive(d, M, w.data(), is_query(mode), causal(mode), vp, kEps,
                                           xd.data(), phi_ref.data(), stab_ref.data());
          check_close("phi", r.phi, phi_ref, kTolForward);
          check_close("stabiliser", r.stabiliser, stab_ref, kTolForward);

          const std::vector<float> d_phi = random_normal(r.phi.size(), gen);
          std::vector<float> dx(x.size(), 7.f);
          performer_features_backward(d, M, w.data(), x.data(), r.phi.data(), kEps, d_phi.data(),
                                      dx.data());
          std::vector<double> dx_ref(x.size());
          const std::vector<double> d_phi_d = to_double(d_phi);
          performer_features_backward_naive(d, M, w.data(), xd.data(), stab_ref.data(),
                                            d_phi_d.data(), dx_ref.data());
          check_close("dx", dx, dx_ref, kTolBackward);
        }
  }
}

TEST_CASE("performer_features: backward equals central differences with the stabiliser fixed") {
  std::mt19937 gen(62);
  const AttentionDims d{2, 4, 2, 3};
  const int64_t M = 5;  // two blocks of d_head = 3 rows, the second cut to 2
  const std::vector<float> w = performer_orthogonal_features(2, M, 3, 9);
  for (Mode mode : kModes) {
    CAPTURE(int(mode));
    const std::vector<float> x = random_normal(size_t(attention_numel(d)), gen);
    const Run r = fast_forward(d, M, w, mode, nullptr, x);
    const std::vector<float> d_phi = random_normal(r.phi.size(), gen);
    std::vector<float> dx(x.size());
    performer_features_backward(d, M, w.data(), x.data(), r.phi.data(), kEps, d_phi.data(),
                                dx.data());
    std::vector<double> xd = to_double(x), phi(r.phi.size());
    const std::vector<double> stab = to_double(r.stabiliser), weights = to_double(d_phi);
    auto loss = [&] {
      performer_features_fixed_naive(d, M, w.data(), kEps, xd.data(), stab.data(), phi.data());
      return weighted_sum(weights, phi);
    };
    check_close("dx vs finite differences", dx, finite_difference(xd, loss), kTolFiniteDiff);
  }
}

TEST_CASE("performer_features: padded keys leave the real keys' features unchanged, bit for bit") {
  std::mt19937 gen(63);
  const int64_t T = 9, pad = 4, H = 2, D = 8, M = 16;
  const std::vector<float> w = performer_orthogonal_features(H, M, D, 5);
  const AttentionDims d{1, T, H, D}, dp{1, T + pad, H, D};
  std::vector<float> x = random_normal(size_t(attention_numel(d)), gen);
  std::vector<float> xp = x;
  const std::vector<float> junk =
      random_normal(size_t(pad * H * D), gen, 10.f);  // large on purpose
  xp.insert(xp.end(), junk.begin(), junk.end());
  std::vector<uint8_t> valid(size_t(T + pad), 1);
  for (int64_t t = T; t < T + pad; ++t) valid[size_t(t)] = 0;
  const Run r = fast_forward(d, M, w, Mode::EncoderKey, nullptr, x);
  const Run rp = fast_forward(dp, M, w, Mode::EncoderKey, valid.data(), xp);
  CHECK(std::equal(r.phi.begin(), r.phi.end(), rp.phi.begin()));
  CHECK(std::equal(r.stabiliser.begin(), r.stabiliser.end(), rp.stabiliser.begin()));
  for (float v : rp.phi) CHECK(std::isfinite(v));  // padded rows stay finite (own-row max)
  // Without the mask the junk rows would raise the shared max and change every real row.
  const Run unmasked = fast_forward(dp, M, w, Mode::EncoderKey, nullptr, xp);
  CHECK(!std::equal(r.phi.begin(), r.phi.end(), unmasked.phi.begin()));
}

TEST_CASE("performer_features: queries and decoder keys at t ignore rows after t, bit for bit") {
  std::mt19937 gen(64);
  const AttentionDims d{2, 11, 2, 8};
  const int64_t M = 16;
  const std::vector<float> w = performer_orthogonal_features(2, M, 8, 6);
  const std::vector<float> x = random_normal(size_t(attention_numel(d)), gen);
  for (Mode mode : kModes) {
    CAPTURE(int(mode));
    const Run r = fast_forward(d, M, w, mode, nullptr, x);
    for (int64_t t : {0, 4, 9}) {
      CAPTURE(t);
      std::vector<float> x2 = x;
      perturb_after(x2, d, t, gen);
      const Run r2 = fast_forward(d, M, w, mode, nullptr, x2);
      // Encoder keys share a sequence-wide max, so they do see later rows (the test can fail).
      CHECK(rows_identical(r.phi, r2.phi, d, M, t) == (mode != Mode::EncoderKey));
    }
  }
}

TEST_CASE("householder_qr_q: the Q of torch.linalg.qr, signs included") {
  // A and torch.linalg.qr(A).Q (torch 1.13, float64); R's diagonal is [-2.01, -2.017, 1.33, 2.08].
  const double a[16] = {0.5, -1.25, 2.0,  0.75, -0.3, 0.8,  -1.1, 1.9,
                        1.7, 0.2,   -0.6, -0.4, -0.9, -1.4, 0.35, 1.05};
  const std::vector<double> expected = {
      -0.24875929755249726, 0.6647914123018692,  0.5138955698295012,   0.4817494507734143,
      0.14925557853149837,  -0.4236626397733647, -0.19668967485914973, 0.8715193123168836,
      -0.8457816116784908,  0.05417727891670987, -0.5282207473992139,  0.05197239471807563,
      0.44776673559449515,  0.6128843024903895,  -0.6466895368957423,  0.07530222523596744};
  std::vector<double> q(16);
  householder_qr_q(4, a, q.data());
  check_close("Q", q, expected, 1e-14);
}

TEST_CASE("performer_orthogonal_features: orthogonal blocks, Gaussian row norms, per-seed") {
  const int64_t H = 4, M = 40, D = 16;  // blocks of 16, 16 and 8 rows per head
  const std::vector<float> w = performer_orthogonal_features(H, M, D, 42);
  REQUIRE(w.size() == size_t(H * M * D));
  auto row = [&](int64_t h, int64_t r) { return w.data() + (h * M + r) * D; };
  auto dotd = [&](const float* a, const float* b) {
    double s = 0;
    for (int64_t i = 0; i < D; ++i) s += double(a[i]) * double(b[i]);
    return s;
  };
  double max_cos_in_block = 0, max_cos_across = 0, sum = 0, sum_sq = 0;
  for (int64_t h = 0; h < H; ++h) {
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = i + 1; j < M; ++j) {
        const double cosine = std::abs(dotd(row(h, i), row(h, j))) /
                              std::sqrt(dotd(row(h, i), row(h, i)) * dotd(row(h, j), row(h, j)));
        double& worst = i / D == j / D ? max_cos_in_block : max_cos_across;
        worst = std::max(worst, cosine);
      }
    for (int64_t b = 0; b * D < M; ++b)
      CHECK(row(h, b * D)[0] < 0);  // LAPACK/torch: Q's first column has a negative first entry
  }
  for (float v : w) {
    sum += v;
    sum_sq += double(v) * v;
  }
  CHECK(max_cos_in_block < 1e-6);  // rows of one block are orthogonal
  CHECK(max_cos_across > 0.3);     // different blocks are independent draws
  const double count = double(w.size()), mean = sum / count, var = sum_sq / count - mean * mean;
  CHECK(std::abs(mean) < 0.1);     // each row is marginally N(0, I_D): entries mean 0, variance 1
  CHECK(std::abs(var - 1) < 0.1);  // (2560 entries: standard errors 0.02 and 0.03)
  CHECK(performer_orthogonal_features(H, M, D, 42) == w);
  CHECK(performer_orthogonal_features(H, M, D, 43) != w);
}

TEST_CASE("performer_features: bad arguments throw ShapeError naming the op") {
  std::vector<float> x(64), w(64), phi(64), s(8);
  CHECK_THROWS_WITH(performer_features_forward({1, 2, 1, 4, 3}, 4, w.data(), true, false, nullptr,
                                               kEps, x.data(), phi.data(), s.data()),
                    doctest::Contains("[performer_features_forward] dims.d_key"));
  CHECK_THROWS_AS(performer_features_forward({1, 2, 1, 4}, 0, w.data(), true, false, nullptr, kEps,
                                             x.data(), phi.data(), s.data()),
                  ShapeError);
  CHECK_THROWS_AS(performer_features_forward({1, 2, 1, 4}, 4, w.data(), true, false, nullptr, kEps,
                                             x.data(), phi.data(), nullptr),
                  ShapeError);
  CHECK_THROWS_WITH(performer_features_backward({1, 2, 1, 4}, 4, w.data(), x.data(), nullptr, kEps,
                                                phi.data(), x.data()),
                    doctest::Contains("[performer_features_backward]"));
}
