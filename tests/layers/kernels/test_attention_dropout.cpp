// Attention dropout in diag_attention and softmax_attention (as in the PyTorch reference:
// nn.Dropout on the probabilities before A·V): fast form against the naive form with the same
// counter-based mask (outputs and gradients), finite differences with a fixed key, the mask's
// documented index and kept fraction, thread independence, causality, padding, and p = 0 being
// exactly no dropout. Legend: B batch, T seq_len, H n_heads, D d_head, W block_size.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/runtime/rng.h"
#include "layers/attention/kernels/diag_attention.h"
#include "layers/attention/kernels/softmax_attention.h"
#include "tests/layers/kernels/kernel_test_utils.h"

using namespace tn;
using namespace tn::kernel_test;

namespace {
// Tolerances as in test_diag_attention.cpp / test_softmax_attention.cpp (max-abs error over
// max(1, max|ref|)); dropout scales kept entries by 1/(1 − p) <= 2 here.
constexpr double kTolForward = 8e-6;     // fast f32 vs naive (double)
constexpr double kTolBackward = 8e-6;    // fast f32 backward vs naive backward (double)
constexpr double kTolFiniteDiff = 4e-6;  // fast f32 backward vs central differences (f64 naive)
constexpr uint64_t kKey = 0x5EEDF00DULL;

/// One attention form: diag relu / diag softmax with block W, or full softmax attention.
struct Form {
  enum Kind { DiagRelu, DiagSoftmax, Softmax } kind;
  int64_t W = 0;  // diag only

  std::string name() const {
    return kind == Softmax ? "softmax_attention"
                           : (kind == DiagRelu ? "diag relu W=" : "diag softmax W=") +
                                 std::to_string(W);
  }
  DiagInnerKind inner() const {
    return kind == DiagRelu ? DiagInnerKind::Relu : DiagInnerKind::Softmax;
  }
  /// What the forward saves: diag's probabilities [B, H, T, W], softmax's row stats [B, H, T, 2].
  size_t probs_size(const AttentionDims& d) const {
    return size_t(kind == Softmax ? softmax_stats_floats(d) : d.batch * d.n_heads * d.seq_len * W);
  }
  void forward(const AttentionDims& d, bool causal, const uint8_t* kv, const float* q,
               const float* k, const float* v, float* out, float* probs, float p,
               uint64_t key) const {
    if (kind == Softmax)
      softmax_attention_forward(d, causal, kv, q, k, v, out, probs, p, key);
    else
      diag_attention_forward(d, W, inner(), causal, kv, q, k, v, out, probs, p, key);
  }
  void backward(const AttentionDims& d, bool causal, const uint8_t* kv, const float* q,
                const float* k, const float* v, const float* probs, const float* g, float* dq,
                float* dk, float* dv, float p, uint64_t key) const {
    if (kind == Softmax)
      softmax_attention_backward(d, causal, kv, q, k, v, probs, g, dq, dk, dv, p, key);
    else
      diag_attention_backward(d, W, inner(), causal, kv, q, k, v, probs, g, dq, dk, dv, p, key);
  }
  template <class Real>
  void forward_naive(const AttentionDims& d, bool causal, const uint8_t* kv, const Real* q,
                     const Real* k, const Real* v, Real* out, float p, uint64_t key) const {
    if (kind == Softmax)
      softmax_attention_forward_naive(d, causal, kv, q, k, v, out, p, key);
    else
      diag_attention_forward_naive(d, W, inner(), causal, kv, q, k, v, out, p, key);
  }
  void backward_naive(const AttentionDims& d, bool causal, const uint8_t* kv, const float* q,
                      const float* k, const float* v, const float* g, float* dq, float* dk,
                      float* dv, float p, uint64_t key) const {
    if (kind == Softmax)
      softmax_attention_backward_naive(d, causal, kv, q, k, v, g, dq, dk, dv, p, key);
    else
      diag_attention_backward_naive(d, W, inner(), causal, kv, q, k, v, g, dq, dk, dv, p, key);
  }
};

using Case = AttentionCase;

/// out, probs, dq, dk, dv of the fast form.
struct Result {
  std::vector<float> out, probs, dq, dk, dv;
};

Result run_fast(const Form& f, const Case& c, bool causal, float p, uint64_t key) {
  const size_t n = c.q.size();
  Result r{std::vector<float>(n), std::vector<float>(f.probs_size(c.dims), 5.f),
           std::vector<float>(n, 7.f), std::vector<float>(n, 7.f), std::vector<float>(n, 7.f)};
  f.forward(c.dims, causal, c.key_valid(), c.q.data(), c.k.data(), c.v.data(), r.out.data(),
            r.probs.data(), p, key);
  f.backward(c.dims, causal, c.key_valid(), c.q.data(), c.k.data(), c.v.data(), r.probs.data(),
             c.d_out.data(), r.dq.data(), r.dk.data(), r.dv.data(), p, key);
  return r;
}

bool same_bits(const Result& a, const Result& b) {
  return a.out == b.out && a.probs == b.probs && a.dq == b.dq && a.dk == b.dk && a.dv == b.dv;
}

std::vector<Form> all_forms(int64_t W) {
  return {{Form::DiagRelu, W}, {Form::DiagSoftmax, W}, {Form::Softmax, 0}};
}

}  // namespace

TEST_CASE("attention dropout: fast form equals the naive form with the same mask") {
  std::mt19937 gen(81);
  struct Shape {
    AttentionDims d;
    int64_t W;
  };
  // D 64 (compiled width) with W 8 and T not a multiple of W; D 20 (runtime width) with W 70 over
  // T 80 (a partial block, two backward tiles); softmax over T 67 (two backward tiles).
  for (const Shape& s : {Shape{{2, 21, 2, 64}, 8}, Shape{{1, 80, 2, 20}, 70}})
    for (const Form& f : all_forms(s.W))
      for (bool causal : {true, false})
        for (bool with_mask : {false, true}) {
          const AttentionDims d =
              f.kind == Form::Softmax ? AttentionDims{1, 67, 2, s.d.d_head} : s.d;
          CAPTURE(f.name());
          CAPTURE(d.d_head);
          CAPTURE(causal);
          CAPTURE(with_mask);
          const Case c(d, gen, with_mask);
          const float p = 0.3f;
          const Result r = run_fast(f, c, causal, p, kKey);
          const size_t n = c.q.size();
          std::vector<float> out_ref(n), dq_ref(n), dk_ref(n), dv_ref(n);
          f.forward_naive(d, causal, c.key_valid(), c.q.data(), c.k.data(), c.v.data(),
                          out_ref.data(), p, kKey);
          f.backward_naive(d, causal, c.key_valid(), c.q.data(), c.k.data(), c.v.data(),
                           c.d_out.data(), dq_ref.data(), dk_ref.data(), dv_ref.data(), p, kKey);
          check_close("out", r.out, out_ref, kTolForward);
          check_close("dq", r.dq, dq_ref, kTolBackward);
          check_close("dk", r.dk, dk_ref, kTolBackward);
          check_close("dv", r.dv, dv_ref, kTolBackward);
          // probs (softmax: its row stats) keep the pre-dropout A; the output does change.
          const Result r0 = run_fast(f, c, causal, 0.f, kKey);
          CHECK(r.probs == r0.probs);
          CHECK(r.out != r0.out);
        }
}

TEST_CASE("attention dropout: backward equals central differences with a fixed key") {
  std::mt19937 gen(82);
  const AttentionDims d{1, 5, 2, 4};
  for (const Form& f : all_forms(3))  // diag blocks [0, 3) and a partial [3, 5)
    for (bool causal : {true, false})
      for (bool with_mask : {false, true}) {
        CAPTURE(f.name());
        CAPTURE(causal);
        CAPTURE(with_mask);
        Case c(d, gen, false);
        if (with_mask) c.valid = {1, 0, 1, 1, 1};
        const float p = 0.4f;
        const Result r = run_fast(f, c, causal, p, kKey);
        const size_t n = c.q.size();
        std::vector<double> q = to_double(c.q), k = to_double(c.k), v = to_double(c.v), y(n);
        const std::vector<double> w = to_double(c.d_out);
        auto loss = [&] {
          f.forward_naive(d, causal, c.key_valid(), q.data(), k.data(), v.data(), y.data(), p,
                          kKey);
          return weighted_sum(w, y);
        };
        check_close("dq vs finite differences", r.dq, finite_difference(q, loss), kTolFiniteDiff);
        check_close("dk vs finite differences", r.dk, finite_difference(k, loss), kTolFiniteDiff);
        check_close("dv vs finite differences", r.dv, finite_difference(v, loss), kTolFiniteDiff);
      }
}

// q = 0 makes every row uniform (softmax: A_ij = 1/n over the n keys of the block) and v_j = e_j
// (one-hot, D = block width) copies A'_ij into out[i][j], so out exposes the mask: entry (b, h, i,
// j) is kept iff counter_uniform(key, ((b·H + h)·T + i)·T + j) >= p, with value (1/n)/(1 − p).
TEST_CASE("attention dropout: the mask is the documented counter-based one, kept fraction 1 - p") {
  const int64_t D = 16;
  for (bool diag : {true, false})
    for (float p : {0.1f, 0.5f}) {
      // diag: blocks of W = D over T 512; softmax: one block of T = D.
      const AttentionDims d{2, diag ? 512 : D, 4, D};
      const int64_t T = d.seq_len, H = d.n_heads, W = D;
      const Form f = diag ? Form{Form::DiagSoftmax, W} : Form{Form::Softmax, 0};
      CAPTURE(f.name());
      CAPTURE(p);
      const size_t n = size_t(attention_numel(d));
      std::vector<float> q(n, 0.f), k(n, 0.f), v(n, 0.f), out(n), probs(f.probs_size(d));
      for (int64_t b = 0; b < d.batch; ++b)
        for (int64_t t = 0; t < T; ++t)
          for (int64_t h = 0; h < H; ++h) v[size_t(((b * T + t) * H + h) * D + t % W)] = 1.f;
      f.forward(d, false, nullptr, q.data(), k.data(), v.data(), out.data(), probs.data(), p,
                kKey);
      const float kept_value = (1.f / float(W)) * (1.f / (1.f - p));
      int64_t kept = 0, total = 0, wrong = 0;
      for (int64_t b = 0; b < d.batch; ++b)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t i = 0; i < T; ++i)
            for (int64_t e = 0; e < D; ++e) {
              const int64_t j = i / W * W + e;  // key of this column
              const uint64_t idx = uint64_t(((b * H + h) * T + i) * T + j);
              const bool keep = counter_uniform(kKey, idx) >= p;
              const float got = out[size_t(((b * T + i) * H + h) * D + e)];
              wrong += got != (keep ? kept_value : 0.f);
              kept += got != 0.f;
              ++total;
            }
      CHECK(wrong == 0);
      const double frac = double(kept) / double(total);
      const double sigma = std::sqrt(double(p) * (1.0 - p) / double(total));
      CAPTURE(total);
      CHECK(std::abs(frac - (1.0 - p)) < 5 * sigma);
    }
}

// The two engines sum in different orders (the block engine's own loops, oneDNN's sgemm), so they
// agree to rounding; a different dropout mask would move outputs and gradients by O(0.1).
TEST_CASE("attention dropout: diag softmax with one block of T is softmax_attention, same key") {
  std::mt19937 gen(83);
  const AttentionDims d{2, 37, 2, 16};
  for (bool causal : {true, false}) {
    CAPTURE(causal);
    const Case c(d, gen, true);
    const Result diag = run_fast(Form{Form::DiagSoftmax, d.seq_len}, c, causal, 0.2f, kKey);
    const Result full = run_fast(Form{Form::Softmax, 0}, c, causal, 0.2f, kKey);
    check_close("out", full.out, diag.out, kTolForward);
    check_close("dq", full.dq, diag.dq, kTolBackward);
    check_close("dk", full.dk, diag.dk, kTolBackward);
    check_close("dv", full.dv, diag.dv, kTolBackward);
  }
}

TEST_CASE("attention dropout: bit-identical for any thread count") {
  std::mt19937 gen(84);
  const AttentionDims d{2, 37, 3, 16};
  const Case c(d, gen, true);
  for (const Form& f : all_forms(8)) {
    CAPTURE(f.name());
    const int saved = omp_get_max_threads();
    std::vector<Result> runs;
    for (int threads : {1, 2, 3}) {
      omp_set_num_threads(threads);
      runs.push_back(run_fast(f, c, true, 0.25f, kKey));
    }
    omp_set_num_threads(saved);
    CHECK(same_bits(runs[1], runs[0]));
    CHECK(same_bits(runs[2], runs[0]));
  }
}

TEST_CASE("attention dropout: p = 0 is exactly no dropout, whatever the key") {
  std::mt19937 gen(85);
  for (bool with_mask : {false, true}) {
    const Case c({2, 45, 2, 32}, gen, with_mask);
    for (const Form& f : all_forms(16))
      for (bool causal : {true, false}) {
        CAPTURE(f.name());
        CAPTURE(causal);
        CAPTURE(with_mask);
        // Default arguments (the pre-dropout signature) against an explicit p = 0 with a key.
        const AttentionDims& d = c.dims;
        const size_t n = c.q.size();
        Result r0{std::vector<float>(n), std::vector<float>(f.probs_size(d)),
                  std::vector<float>(n), std::vector<float>(n), std::vector<float>(n)};
        if (f.kind == Form::Softmax) {
          softmax_attention_forward(d, causal, c.key_valid(), c.q.data(), c.k.data(), c.v.data(),
                                    r0.out.data(), r0.probs.data());
          softmax_attention_backward(d, causal, c.key_valid(), c.q.data(), c.k.data(), c.v.data(),
                                     r0.probs.data(), c.d_out.data(), r0.dq.data(), r0.dk.data(),
                                     r0.dv.data());
        } else {
          diag_attention_forward(d, f.W, f.inner(), causal, c.key_valid(), c.q.data(), c.k.data(),
                                 c.v.data(), r0.out.data(), r0.probs.data());
          diag_attention_backward(d, f.W, f.inner(), causal, c.key_valid(), c.q.data(),
                                  c.k.data(), c.v.data(), r0.probs.data(), c.d_out.data(),
                                  r0.dq.data(), r0.dk.data(), r0.dv.data());
        }
        CHECK(same_bits(run_fast(f, c, causal, 0.f, 0xDEADBEEFULL), r0));
        // The naive forms too.
        std::vector<float> a(n), b(n);
        f.forward_naive(d, causal, c.key_valid(), c.q.data(), c.k.data(), c.v.data(), a.data(),
                        0.f, 0xDEADBEEFULL);
        f.forward_naive(d, causal, c.key_valid(), c.q.data(), c.k.data(), c.v.data(), b.data(),
                        0.f, 0);
        CHECK(a == b);
      }
  }
}

TEST_CASE("attention dropout: causal outputs at positions <= t ignore inputs after t") {
  std::mt19937 gen(86);
  const int64_t W = 16;
  const AttentionDims d{2, 3 * W + 5, 2, 8};
  for (const Form& f : all_forms(W)) {
    const Case c(d, gen, false);
    const size_t n = c.q.size();
    std::vector<float> out(n), probs(f.probs_size(d));
    f.forward(d, true, nullptr, c.q.data(), c.k.data(), c.v.data(), out.data(), probs.data(),
              0.3f, kKey);
    for (int64_t t : {int64_t(0), W - 1, W, d.seq_len - 2}) {
      CAPTURE(f.name());
      CAPTURE(t);
      std::vector<float> q = c.q, k = c.k, v = c.v, out2(n);
      perturb_after(q, d, t, gen);
      perturb_after(k, d, t, gen);
      perturb_after(v, d, t, gen);
      f.forward(d, true, nullptr, q.data(), k.data(), v.data(), out2.data(), probs.data(), 0.3f,
                kKey);
      CHECK(rows_identical(out, out2, d, d.d_head, t));
      CHECK(!rows_identical(out, out2, d, d.d_head, d.seq_len - 1));
    }
  }
}

// The mask index contains T and b, so a padded batch and a sequence alone draw different masks;
// what must hold is that garbage at padded keys (key_valid 0) never matters: two different
// garbage fillings give bit-identical real rows and gradients, and padded keys get no gradient.
TEST_CASE("attention dropout: garbage at padded keys changes nothing, bit for bit") {
  std::mt19937 gen(87);
  const int64_t T = 29, H = 2, D = 8, W = 8;
  const int64_t lengths[2] = {21, 13};
  const AttentionDims d{2, T, H, D};
  Case base(d, gen, false);
  base.valid.assign(size_t(2 * T), 0);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < lengths[b]; ++t) base.valid[size_t(b * T + t)] = 1;
  auto with_garbage = [&](float gq, float gk, float gv) {
    Case c = base;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t t = lengths[b]; t < T; ++t)
        for (int64_t i = 0; i < H * D; ++i) {
          const size_t at = size_t((b * T + t) * H * D + i);
          c.q[at] = gq;
          c.k[at] = gk;
          c.v[at] = gv;
          c.d_out[at] = 0.f;  // a loss that ignores padded rows
        }
    return c;
  };
  const Case c1 = with_garbage(1e3f, -5e2f, 1e4f), c2 = with_garbage(-3.f, 7.f, -1e4f);
  for (const Form& f : all_forms(W))
    for (bool causal : {true, false}) {
      CAPTURE(f.name());
      CAPTURE(causal);
      const Result r1 = run_fast(f, c1, causal, 0.3f, kKey);
      const Result r2 = run_fast(f, c2, causal, 0.3f, kKey);
      bool real_same = true, pad_grads_zero = true;
      for (int64_t b = 0; b < 2; ++b)
        for (int64_t t = 0; t < T; ++t)
          for (int64_t i = 0; i < H * D; ++i) {
            const size_t at = size_t((b * T + t) * H * D + i);
            if (t < lengths[b])
              real_same &= r1.out[at] == r2.out[at] && r1.dq[at] == r2.dq[at] &&
                           r1.dk[at] == r2.dk[at] && r1.dv[at] == r2.dv[at];
            else
              pad_grads_zero &= r1.dk[at] == 0.f && r1.dv[at] == 0.f;
          }
      CHECK(real_same);
      CHECK(pad_grads_zero);
      // Masked entries stay 0 (probs are pre-dropout, the output uses the same masked A).
      std::vector<float> ref(c1.q.size());
      f.forward_naive(d, causal, c1.key_valid(), c1.q.data(), c1.k.data(), c1.v.data(),
                      ref.data(), 0.3f, kKey);
      check_close("out vs naive", r1.out, ref, kTolForward);
    }
}

TEST_CASE("attention dropout: dropout_p outside 0 <= p < 1 throws ShapeError naming the op") {
  std::vector<float> x(64);
  const AttentionDims d{1, 2, 1, 4};
  for (float p : {1.f, -0.1f, std::numeric_limits<float>::quiet_NaN()}) {
    CAPTURE(p);
    CHECK_THROWS_WITH_AS(diag_attention_forward(d, 2, DiagInnerKind::Relu, true, nullptr, x.data(),
                                                x.data(), x.data(), x.data(), x.data(), p, 1),
                         doctest::Contains("[diag_attention_forward] dropout_p"), ShapeError);
    CHECK_THROWS_WITH_AS(
        softmax_attention_backward(d, true, nullptr, x.data(), x.data(), x.data(), x.data(),
                                   x.data(), x.data(), x.data(), x.data(), p, 1),
        doctest::Contains("[softmax_attention_backward] dropout_p"), ShapeError);
  }
}
