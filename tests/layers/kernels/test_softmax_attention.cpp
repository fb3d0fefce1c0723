// softmax_attention: fast form against the literal masked T×T naive form, finite differences,
// causality, padding invariance, fully masked rows. Legend: B batch, T seq_len, H n_heads, D
// d_head.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "layers/attention/kernels/softmax_attention.h"
#include "tests/layers/kernels/kernel_test_utils.h"

using namespace tn;
using namespace tn::kernel_test;

namespace {
// Tolerances: max-abs error / max(1, max|ref|); q ~ N(0, 1/D) (pre-scaled), k, v, d_out ~ N(0, 1).
constexpr double kTolForward = 4e-6;   // fast f32 forward vs naive (double)
constexpr double kTolBackward = 4e-6;  // fast f32 backward vs naive backward (double)
constexpr double kTolFiniteDiff =
    2e-6;  // fast f32 backward vs central differences of the f64 naive forward
constexpr double kTolPadding = 0.0;  // padded vs alone: masked keys are skipped, so bit-identical

struct Case : AttentionCase {
  Case(AttentionDims d, std::mt19937& gen, bool with_mask) : AttentionCase(d, gen, with_mask) {
    if (with_mask) valid[0] = 0;  // causal row 0 of batch 0 then has no valid key
  }
  size_t stats_size() const { return size_t(softmax_stats_floats(dims)); }
};

void compare_with_naive(const AttentionDims& d, bool causal, bool with_mask, std::mt19937& gen) {
  Case c(d, gen, with_mask);
  const size_t n = c.q.size();
  std::vector<float> out(n), out_ref(n), stats(c.stats_size(), 5.f);
  softmax_attention_forward(d, causal, c.key_valid(), c.q.data(), c.k.data(), c.v.data(),
                            out.data(), stats.data());
  softmax_attention_forward_naive(d, causal, c.key_valid(), c.q.data(), c.k.data(), c.v.data(),
                                  out_ref.data());
  check_close("out", out, out_ref, kTolForward);
  std::vector<float> dq(n, 7.f), dk(n, 7.f), dv(n, 7.f), dq_ref(n), dk_ref(n), dv_ref(n);
  softmax_attention_backward(d, causal, c.key_valid(), c.q.data(), c.k.data(), c.v.data(),
                             stats.data(), c.d_out.data(), dq.data(), dk.data(), dv.data());
  softmax_attention_backward_naive(d, causal, c.key_valid(), c.q.data(), c.k.data(), c.v.data(),
                                   c.d_out.data(), dq_ref.data(), dk_ref.data(), dv_ref.data());
  check_close("dq", dq, dq_ref, kTolBackward);
  check_close("dk", dk, dk_ref, kTolBackward);
  check_close("dv", dv, dv_ref, kTolBackward);
}

}  // namespace

TEST_CASE("softmax_attention: fast form equals the naive masked T×T form") {
  std::mt19937 gen(31);
  for (bool causal : {true, false})
    for (bool with_mask : {false, true})
      for (int64_t D : {32, 60})
        for (int64_t T : {1, 63, 64, 65, 197}) {
          if (with_mask && D == 32) continue;  // the mask is covered at D = 60; keeps the file fast
          CAPTURE(causal);
          CAPTURE(with_mask);
          CAPTURE(D);
          CAPTURE(T);
          compare_with_naive({2, T, 2, D}, causal, with_mask, gen);
        }
}

// Every width run_at_width compiles (16, 32, 64, 128) and a runtime one (60), at T 65: the test the
// QEMU runs of the ISA clones use (CMakeLists.txt); the T grid above is checked natively.
TEST_CASE("softmax_attention: every head width (16, 32, 60, 64, 128) equals the naive form") {
  std::mt19937 gen(37);
  for (int64_t D : {16, 32, 60, 64, 128})
    for (bool causal : {true, false})
      for (bool with_mask : {false, true}) {
        CAPTURE(D);
        CAPTURE(causal);
        CAPTURE(with_mask);
        compare_with_naive({2, 65, 2, D}, causal, with_mask, gen);
      }
}

// The fast form computes query rows in tiles (full_attention.cpp: up to 256 rows, fewer as n grows
// past 1,024), the rows before the last valid key apart from those after it; T 300 gives tiles of
// 256 and 44 rows without a mask, and with right padding 256 and 14 rows, then the 30 rows after the
// last key.
TEST_CASE("softmax_attention: several row tiles, right padding and dropout equal the naive form") {
  std::mt19937 gen(36);
  const AttentionDims d{2, 300, 1, 16};
  for (bool causal : {true, false})
    for (bool padded : {false, true})
      for (float p : {0.f, 0.2f}) {
        CAPTURE(causal);
        CAPTURE(padded);
        CAPTURE(p);
        Case c(d, gen, false);
        if (padded) {  // batch 0: 270 keys, key 100 masked too; batch 1: 7 keys
          c.valid.assign(size_t(2 * d.seq_len), 0);
          for (int64_t t = 0; t < 270; ++t) c.valid[size_t(t)] = t != 100;
          for (int64_t t = 0; t < 7; ++t) c.valid[size_t(d.seq_len + t)] = 1;
        }
        const uint64_t key = 0xC0FFEEULL;
        const size_t n = c.q.size();
        std::vector<float> out(n), out_ref(n), stats(c.stats_size(), 5.f);
        softmax_attention_forward(d, causal, c.key_valid(), c.q.data(), c.k.data(), c.v.data(),
                                  out.data(), stats.data(), p, key);
        softmax_attention_forward_naive(d, causal, c.key_valid(), c.q.data(), c.k.data(),
                                        c.v.data(), out_ref.data(), p, key);
        check_close("out", out, out_ref, kTolForward);
        std::vector<float> dq(n, 7.f), dk(n, 7.f), dv(n, 7.f), dq_ref(n), dk_ref(n), dv_ref(n);
        softmax_attention_backward(d, causal, c.key_valid(), c.q.data(), c.k.data(), c.v.data(),
                                   stats.data(), c.d_out.data(), dq.data(), dk.data(), dv.data(),
                                   p, key);
        softmax_attention_backward_naive(d, causal, c.key_valid(), c.q.data(), c.k.data(),
                                         c.v.data(), c.d_out.data(), dq_ref.data(), dk_ref.data(),
                                         dv_ref.data(), p, key);
        check_close("dq", dq, dq_ref, kTolBackward);
        check_close("dk", dk, dk_ref, kTolBackward);
        check_close("dv", dv, dv_ref, kTolBackward);
      }
}

TEST_CASE("softmax_attention: backward equals central differences of the f64 naive forward") {
  std::mt19937 gen(32);
  const AttentionDims d{1, 5, 2, 4};
  for (bool causal : {true, false})
    for (bool with_mask : {false, true}) {
      CAPTURE(causal);
      CAPTURE(with_mask);
      Case c(d, gen, false);
      if (with_mask) c.valid = {0, 1, 1, 0, 1};
      const size_t n = c.q.size();
      std::vector<float> out(n), stats(c.stats_size()), dq(n), dk(n), dv(n);
      softmax_attention_forward(d, causal, c.key_valid(), c.q.data(), c.k.data(), c.v.data(),
                                out.data(), stats.data());
      softmax_attention_backward(d, causal, c.key_valid(), c.q.data(), c.k.data(), c.v.data(),
                                 stats.data(), c.d_out.data(), dq.data(), dk.data(), dv.data());
      std::vector<double> q = to_double(c.q), k = to_double(c.k), v = to_double(c.v), y(n);
      const std::vector<double> w = to_double(c.d_out);
      auto loss = [&] {
        softmax_attention_forward_naive(d, causal, c.key_valid(), q.data(), k.data(), v.data(),
                                        y.data());
        return weighted_sum(w, y);
      };
      check_close("dq vs finite differences", dq, finite_difference(q, loss), kTolFiniteDiff);
      check_close("dk vs finite differences", dk, finite_difference(k, loss), kTolFiniteDiff);
      check_close("dv vs finite differences", dv, finite_difference(v, loss), kTolFiniteDiff);
    }
}

TEST_CASE(
    "softmax_attention: causal outputs at positions <= t ignore inputs after t, bit for bit") {
  std::mt19937 gen(33);
  const int64_t C =
      16;  // the kernel has no chunk; same lengths as the chunked kernels for symmetry
  for (int64_t T : {C - 1, C, C + 1, 3 * C + 5}) {
    const AttentionDims d{2, T, 2, 8};
    Case c(d, gen, false);
    const size_t n = c.q.size();
    std::vector<float> out(n), stats(c.stats_size());
    softmax_attention_forward(d, true, nullptr, c.q.data(), c.k.data(), c.v.data(), out.data(),
                              stats.data());
    for (int64_t t : {int64_t(0), C - 2, C - 1, C, T - 2}) {
      if (t < 0 || t >= T - 1) continue;
      CAPTURE(T);
      CAPTURE(t);
      std::vector<float> q = c.q, k = c.k, v = c.v, out2(n);
      perturb_after(q, d, t, gen);
      perturb_after(k, d, t, gen);
      perturb_after(v, d, t, gen);
      softmax_attention_forward(d, true, nullptr, q.data(), k.data(), v.data(), out2.data(),
                                stats.data());
      CHECK(rows_identical(out, out2, d, d.d_head, t));
      CHECK(!rows_identical(out, out2, d, d.d_head, T - 1));
    }
  }
}

TEST_CASE(
    "softmax_attention: a sequence padded with garbage keys (key_valid 0) equals the sequence "
    "alone") {
  std::mt19937 gen(34);
  const int64_t T_pad = 29, H = 2, D = 8;
  const int64_t lengths[2] = {21, 13};
  const AttentionDims dp{2, T_pad, H, D};
  Case padded(dp, gen, false);
  padded.valid.assign(size_t(2 * T_pad), 0);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < T_pad; ++t) {
      if (t < lengths[b]) {
        padded.valid[size_t(b * T_pad + t)] = 1;
        continue;
      }
      for (int64_t i = 0; i < H * D; ++i) {  // garbage; padded queries get no upstream gradient
        const size_t at = size_t((b * T_pad + t) * H * D + i);
        padded.q[at] = 1e3f;
        padded.k[at] = -5e2f;
        padded.v[at] = 1e4f;
        padded.d_out[at] = 0.f;
      }
    }
  for (bool causal : {true, false}) {
    CAPTURE(causal);
    const size_t n = padded.q.size();
    std::vector<float> out(n), stats(padded.stats_size()), dq(n), dk(n), dv(n);
    softmax_attention_forward(dp, causal, padded.key_valid(), padded.q.data(), padded.k.data(),
                              padded.v.data(), out.data(), stats.data());
    softmax_attention_backward(dp, causal, padded.key_valid(), padded.q.data(), padded.k.data(),
                               padded.v.data(), stats.data(), padded.d_out.data(), dq.data(),
                               dk.data(), dv.data());
    for (int64_t b = 0; b < 2; ++b) {
      CAPTURE(b);
      const int64_t T = lengths[b];
      const AttentionDims da{1, T, H, D};
      const size_t off = size_t(b * T_pad * H * D), m = size_t(T * H * D);
      auto slice = [&](const std::vector<float>& x) {
        return std::vector<float>(x.begin() + off, x.begin() + off + m);
      };
      const std::vector<float> q = slice(padded.q), k = slice(padded.k), v = slice(padded.v),
                               g = slice(padded.d_out);
      std::vector<float> out_a(m), stats_a(size_t(H * T * 2)), dq_a(m), dk_a(m), dv_a(m);
      softmax_attention_forward(da, causal, nullptr, q.data(), k.data(), v.data(), out_a.data(),
                                stats_a.data());
      softmax_attention_backward(da, causal, nullptr, q.data(), k.data(), v.data(), stats_a.data(),
                                 g.data(), dq_a.data(), dk_a.data(), dv_a.data());
      check_close("out (padded vs alone)", slice(out), out_a, kTolPadding);
      check_close("dq (padded vs alone)", slice(dq), dq_a, kTolPadding);
      check_close("dk (padded vs alone)", slice(dk), dk_a, kTolPadding);
      check_close("dv (padded vs alone)", slice(dv), dv_a, kTolPadding);
    }
  }
}

TEST_CASE("softmax_attention: rows with no valid key give 0, with zero gradients and no NaN") {
  std::mt19937 gen(35);
  const AttentionDims d{2, 7, 2, 4};
  Case c(d, gen, false);
  c.valid.assign(size_t(2 * 7), 1);
  for (int64_t t = 0; t < 7; ++t) c.valid[size_t(7 + t)] = 0;  // batch 1: no valid key at all
  c.valid[0] = 0;  // batch 0: causal row 0 sees only key 0
  const size_t n = c.q.size(), half = n / 2;
  for (bool causal : {true, false}) {
    CAPTURE(causal);
    std::vector<float> out(n), stats(c.stats_size()), dq(n), dk(n), dv(n);
    softmax_attention_forward(d, causal, c.key_valid(), c.q.data(), c.k.data(), c.v.data(),
                              out.data(), stats.data());
    softmax_attention_backward(d, causal, c.key_valid(), c.q.data(), c.k.data(), c.v.data(),
                               stats.data(), c.d_out.data(), dq.data(), dk.data(), dv.data());
    bool batch1_zero = true, all_finite = true;
    for (size_t i = half; i < n; ++i)
      batch1_zero &= out[i] == 0.f && dq[i] == 0.f && dk[i] == 0.f && dv[i] == 0.f;
    // Row stats of batch 1: {max −inf, 1/sum 0}, which the backward reads as a row of zeros.
    for (size_t i = c.stats_size() / 2; i < c.stats_size(); i += 2)
      batch1_zero &= std::isinf(stats[i]) && stats[i] < 0.f && stats[i + 1] == 0.f;
    for (size_t i = 0; i < n; ++i) all_finite &= std::isfinite(out[i]) && std::isfinite(dq[i]);
    CHECK(batch1_zero);
    CHECK(all_finite);
    if (causal)
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t e = 0; e < 4; ++e) CHECK(out[size_t(h * 4 + e)] == 0.f);  // batch 0, row 0
  }
}
