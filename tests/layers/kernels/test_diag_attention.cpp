// diag_attention: block engine against the literal per-block naive form (partial last blocks
// included), finite differences, causality, padding invariance. Legend: B batch, T seq_len, H
// n_heads, D d_head, W block_size.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "layers/attention/kernels/diag_attention.h"
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

std::string name(DiagInnerKind inner) { return inner == DiagInnerKind::Relu ? "relu" : "softmax"; }

using Case = AttentionCase;

void compare_with_naive(const AttentionDims& d, int64_t W, DiagInnerKind inner, bool causal,
                        bool with_mask, std::mt19937& gen) {
  Case c(d, gen, with_mask);
  const size_t n = c.q.size();
  std::vector<float> out(n), out_ref(n), probs(size_t(d.batch * d.n_heads * d.seq_len * W), 5.f);
  diag_attention_forward(d, W, inner, causal, c.key_valid(), c.q.data(), c.k.data(), c.v.data(),
                         out.data(), probs.data());
  diag_attention_forward_naive(d, W, inner, causal, c.key_valid(), c.q.data(), c.k.data(),
                               c.v.data(), out_ref.data());
  check_close("out", out, out_ref, kTolForward);
  // probs: zero outside each row's allowed keys, softmax rows sum to 1 (or 0 when fully masked).
  bool probs_ok = true;
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t h = 0; h < d.n_heads; ++h)
      for (int64_t t = 0; t < d.seq_len; ++t) {
        const float* row = probs.data() + ((b * d.n_heads + h) * d.seq_len + t) * W;
        const int64_t s0 = t / W * W;
        double sum = 0;
        bool any = false;
        for (int64_t j = 0; j < W; ++j) {
          const int64_t key = s0 + j;
          const bool allowed = key < d.seq_len && !(causal && key > t) &&
                               (!c.key_valid() || c.valid[b * d.seq_len + key]);
          if (!allowed && row[j] != 0.f) probs_ok = false;
          if (row[j] < 0.f) probs_ok = false;
          any = any || allowed;
          sum += row[j];
        }
        if (inner == DiagInnerKind::Softmax && std::abs(sum - (any ? 1.0 : 0.0)) > 1e-5)
          probs_ok = false;
      }
  CHECK_MESSAGE(probs_ok, "probs rows are not masked/normalised as documented");

  std::vector<float> dq(n, 7.f), dk(n, 7.f), dv(n, 7.f), dq_ref(n), dk_ref(n),
      dv_ref(n);  // 7: overwrite check
  diag_attention_backward(d, W, inner, causal, c.key_valid(), c.q.data(), c.k.data(), c.v.data(),
                          probs.data(), c.d_out.data(), dq.data(), dk.data(), dv.data());
  diag_attention_backward_naive(d, W, inner, causal, c.key_valid(), c.q.data(), c.k.data(),
                                c.v.data(), c.d_out.data(), dq_ref.data(), dk_ref.data(),
                                dv_ref.data());
  check_close("dq", dq, dq_ref, kTolBackward);
  check_close("dk", dk, dk_ref, kTolBackward);
  check_close("dv", dv, dv_ref, kTolBackward);
}

}  // namespace

TEST_CASE(
    "diag_attention: fast form equals the naive per-block form, partial last blocks included") {
  std::mt19937 gen(21);
  for (DiagInnerKind inner : {DiagInnerKind::Relu, DiagInnerKind::Softmax})
    for (bool causal : {true, false})
      for (bool with_mask : {false, true}) {
        for (int64_t D : {32, 60})
          for (int64_t T : {1, 63, 64, 65, 197}) {
            if (with_mask && D == 32)
              continue;  // the mask is covered at D = 60; keeps the file fast
            CAPTURE(name(inner));
            CAPTURE(causal);
            CAPTURE(with_mask);
            CAPTURE(D);
            CAPTURE(T);
            compare_with_naive({2, T, 2, D}, 64, inner, causal, with_mask, gen);
          }
        for (int64_t T :
             {5, 13, 21}) {  // W = 8, T not a multiple of W; D = 64 takes the fixed-width path
          CAPTURE(name(inner));
          CAPTURE(causal);
          CAPTURE(with_mask);
          CAPTURE(T);
          compare_with_naive({2, T, 3, 64}, 8, inner, causal, with_mask, gen);
        }
      }
}

// Every width run_at_width compiles (16, 32, 64, 128) and a runtime one (60): the test the QEMU runs
// of the ISA clones use (CMakeLists.txt); the T grid above is checked natively.
TEST_CASE("diag_attention: every head width (16, 32, 60, 64, 128) equals the naive form") {
  std::mt19937 gen(26);
  for (int64_t D : {16, 32, 60, 64, 128})
    for (DiagInnerKind inner : {DiagInnerKind::Relu, DiagInnerKind::Softmax})
      for (bool causal : {true, false}) {
        CAPTURE(D);
        CAPTURE(name(inner));
        CAPTURE(causal);
        compare_with_naive({2, 45, 2, D}, 16, inner, causal, true, gen);
      }
}

TEST_CASE("diag_attention: backward equals central differences of the f64 naive forward") {
  std::mt19937 gen(22);
  const AttentionDims d{1, 5, 2, 4};
  const int64_t W = 3;  // blocks [0, 3) and a partial [3, 5)
  for (DiagInnerKind inner : {DiagInnerKind::Relu, DiagInnerKind::Softmax})
    for (bool causal : {true, false})
      for (bool with_mask : {false, true}) {
        CAPTURE(name(inner));
        CAPTURE(causal);
        CAPTURE(with_mask);
        Case c(d, gen, false);
        if (with_mask) c.valid = {1, 0, 1, 1, 0};
        const size_t n = c.q.size();
        std::vector<float> out(n), probs(size_t(d.n_heads * d.seq_len * W)), dq(n), dk(n), dv(n);
        diag_attention_forward(d, W, inner, causal, c.key_valid(), c.q.data(), c.k.data(),
                               c.v.data(), out.data(), probs.data());
        diag_attention_backward(d, W, inner, causal, c.key_valid(), c.q.data(), c.k.data(),
                                c.v.data(), probs.data(), c.d_out.data(), dq.data(), dk.data(),
                                dv.data());
        std::vector<double> q = to_double(c.q), k = to_double(c.k), v = to_double(c.v), y(n);
        const std::vector<double> w = to_double(c.d_out);
        auto loss = [&] {
          diag_attention_forward_naive(d, W, inner, causal, c.key_valid(), q.data(), k.data(),
                                       v.data(), y.data());
          return weighted_sum(w, y);
        };
        check_close("dq vs finite differences", dq, finite_difference(q, loss), kTolFiniteDiff);
        check_close("dk vs finite differences", dk, finite_difference(k, loss), kTolFiniteDiff);
        check_close("dv vs finite differences", dv, finite_difference(v, loss), kTolFiniteDiff);
      }
}

TEST_CASE("diag_attention: causal outputs at positions <= t ignore inputs after t, bit for bit") {
  std::mt19937 gen(23);
  const int64_t W = 16;
  for (DiagInnerKind inner : {DiagInnerKind::Relu, DiagInnerKind::Softmax})
    for (int64_t T : {W - 1, W, W + 1, 3 * W + 5}) {
      const AttentionDims d{2, T, 2, 8};
      Case c(d, gen, false);
      const size_t n = c.q.size();
      std::vector<float> out(n), probs(size_t(d.batch * d.n_heads * T * W));
      diag_attention_forward(d, W, inner, true, nullptr, c.q.data(), c.k.data(), c.v.data(),
                             out.data(), probs.data());
      for (int64_t t : {int64_t(0), W - 2, W - 1, W, T - 2}) {
        if (t < 0 || t >= T - 1) continue;
        CAPTURE(name(inner));
        CAPTURE(T);
        CAPTURE(t);
        std::vector<float> q = c.q, k = c.k, v = c.v, out2(n);
        perturb_after(q, d, t, gen);
        perturb_after(k, d, t, gen);
        perturb_after(v, d, t, gen);
        diag_attention_forward(d, W, inner, true, nullptr, q.data(), k.data(), v.data(),
                               out2.data(), probs.data());
        CHECK(rows_identical(out, out2, d, d.d_head, t));
        CHECK(!rows_identical(out, out2, d, d.d_head, T - 1));
      }
    }
}

TEST_CASE(
    "diag_attention: a sequence padded with garbage keys (key_valid 0) equals the sequence alone") {
  std::mt19937 gen(24);
  const int64_t W = 8, T_pad = 29, H = 2, D = 8;
  const int64_t lengths[2] = {21, 13};
  const AttentionDims dp{2, T_pad, H, D};
  Case padded(dp, gen, false);
  padded.valid.assign(size_t(2 * T_pad), 0);
  // Garbage rows after each sequence: large values, so any leak would show. Padded query rows still
  // attend (only keys are masked), so their upstream gradient is 0, as a loss that ignores them
  // gives.
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < T_pad; ++t) {
      if (t < lengths[b]) {
        padded.valid[size_t(b * T_pad + t)] = 1;
        continue;
      }
      for (int64_t i = 0; i < H * D; ++i) {
        const size_t at = size_t((b * T_pad + t) * H * D + i);
        padded.q[at] = 1e3f;
        padded.k[at] = -5e2f;
        padded.v[at] = 1e4f;
        padded.d_out[at] = 0.f;
      }
    }
  for (DiagInnerKind inner : {DiagInnerKind::Relu, DiagInnerKind::Softmax})
    for (bool causal : {true, false}) {
      CAPTURE(name(inner));
      CAPTURE(causal);
      const size_t n = padded.q.size();
      std::vector<float> out(n), probs(size_t(2 * H * T_pad * W)), dq(n), dk(n), dv(n);
      diag_attention_forward(dp, W, inner, causal, padded.key_valid(), padded.q.data(),
                             padded.k.data(), padded.v.data(), out.data(), probs.data());
      diag_attention_backward(dp, W, inner, causal, padded.key_valid(), padded.q.data(),
                              padded.k.data(), padded.v.data(), probs.data(), padded.d_out.data(),
                              dq.data(), dk.data(), dv.data());
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
        std::vector<float> out_a(m), probs_a(size_t(H * T * W)), dq_a(m), dk_a(m), dv_a(m);
        diag_attention_forward(da, W, inner, causal, nullptr, q.data(), k.data(), v.data(),
                               out_a.data(), probs_a.data());
        diag_attention_backward(da, W, inner, causal, nullptr, q.data(), k.data(), v.data(),
                                probs_a.data(), g.data(), dq_a.data(), dk_a.data(), dv_a.data());
        check_close("out (padded vs alone)", slice(out), out_a, kTolPadding);
        check_close("dq (padded vs alone)", slice(dq), dq_a, kTolPadding);
        check_close("dk (padded vs alone)", slice(dk), dk_a, kTolPadding);
        check_close("dv (padded vs alone)", slice(dv), dv_a, kTolPadding);
        // Garbage keys get no gradient.
        bool pad_grads_zero = true;
        for (size_t i = off + m; i < off + size_t(T_pad * H * D); ++i)
          pad_grads_zero &= dk[i] == 0.f && dv[i] == 0.f;
        CHECK(pad_grads_zero);
      }
    }
}

TEST_CASE("diag_attention: softmax rows whose keys are all masked give 0, not NaN") {
  const AttentionDims d{1, 6, 1, 4};
  const int64_t W = 3;
  std::mt19937 gen(25);
  Case c(d, gen, false);
  c.valid = {1, 1, 1, 0, 0, 0};  // the second block has no valid key
  const size_t n = c.q.size();
  std::vector<float> out(n), probs(size_t(d.seq_len * W)), dq(n), dk(n), dv(n);
  for (bool causal : {true, false}) {
    diag_attention_forward(d, W, DiagInnerKind::Softmax, causal, c.key_valid(), c.q.data(),
                           c.k.data(), c.v.data(), out.data(), probs.data());
    diag_attention_backward(d, W, DiagInnerKind::Softmax, causal, c.key_valid(), c.q.data(),
                            c.k.data(), c.v.data(), probs.data(), c.d_out.data(), dq.data(),
                            dk.data(), dv.data());
    for (size_t i = 3 * 4; i < n; ++i) {
      CHECK(out[i] == 0.f);
      CHECK(dq[i] == 0.f);
      CHECK(dk[i] == 0.f);
      CHECK(dv[i] == 0.f);
    }
    for (size_t i = 3 * W; i < probs.size(); ++i) CHECK(probs[i] == 0.f);
  }
}

TEST_CASE("diag_attention: bad arguments throw ShapeError naming the op") {
  std::vector<float> x(8);
  CHECK_THROWS_WITH_AS(diag_attention_forward({1, 2, 1, 4}, 0, DiagInnerKind::Relu, true, nullptr,
                                              x.data(), x.data(), x.data(), x.data(), x.data()),
                       doctest::Contains("[diag_attention_forward] block_size"), ShapeError);
}
