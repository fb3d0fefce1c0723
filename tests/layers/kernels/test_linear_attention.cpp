// linear_attention: chunked/global fast form against the masked T×T naive form, finite differences,
// causality. Legend: B batch, T seq_len, H n_heads, D d_head, C chunk.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "layers/attention/kernels/linear_attention.h"
#include "tests/layers/kernels/kernel_test_utils.h"

using namespace tn;
using namespace tn::kernel_test;

namespace {
// Tolerances: max-abs error / max(1, max|ref|), inputs N(0, 1).
constexpr double kTolForward = 3e-6;   // fast f32 forward vs naive (double accumulation)
constexpr double kTolBackward = 4e-6;  // fast f32 backward vs naive backward
constexpr double kTolFiniteDiff =
    2e-6;  // fast f32 backward vs central differences of the f64 naive forward

struct Case {
  AttentionDims dims;
  std::vector<float> q, k, v, d_num, d_den;
  Case(AttentionDims d, std::mt19937& gen) : dims(d) {
    const size_t n = size_t(attention_numel(d)), nd = size_t(d.batch * d.seq_len * d.n_heads);
    q = random_normal(n, gen);
    k = random_normal(n, gen);
    v = random_normal(n, gen);
    d_num = random_normal(n, gen);
    d_den = random_normal(nd, gen);
  }
};

void compare_with_naive(const AttentionDims& d, bool causal, int64_t chunk, std::mt19937& gen,
                        bool check_optional_den = false) {
  Case c(d, gen);
  const size_t n = c.q.size(), nd = c.d_den.size();
  std::vector<float> num(n), den(nd), num_ref(n), den_ref(nd);
  linear_attention_forward(d, causal, chunk, c.q.data(), c.k.data(), c.v.data(), num.data(),
                           den.data());
  linear_attention_forward_naive(d, causal, c.q.data(), c.k.data(), c.v.data(), num_ref.data(),
                                 den_ref.data());
  check_close("num", num, num_ref, kTolForward);
  check_close("den", den, den_ref, kTolForward);

  std::vector<float> dq(n, 7.f), dk(n, 7.f), dv(n, 7.f), dq_ref(n), dk_ref(n),
      dv_ref(n);  // 7: overwrite check
  linear_attention_backward(d, causal, chunk, c.q.data(), c.k.data(), c.v.data(), c.d_num.data(),
                            c.d_den.data(), dq.data(), dk.data(), dv.data());
  linear_attention_backward_naive(d, causal, c.q.data(), c.k.data(), c.v.data(), c.d_num.data(),
                                  c.d_den.data(), dq_ref.data(), dk_ref.data(), dv_ref.data());
  check_close("dq", dq, dq_ref, kTolBackward);
  check_close("dk", dk, dk_ref, kTolBackward);
  check_close("dv", dv, dv_ref, kTolBackward);

  if (!check_optional_den) return;
  // den and d_den are optional.
  std::vector<float> num2(n);
  linear_attention_forward(d, causal, chunk, c.q.data(), c.k.data(), c.v.data(), num2.data(),
                           nullptr);
  CHECK(num2 == num);
  linear_attention_backward(d, causal, chunk, c.q.data(), c.k.data(), c.v.data(), c.d_num.data(),
                            nullptr, dq.data(), dk.data(), dv.data());
  linear_attention_backward_naive(d, causal, c.q.data(), c.k.data(), c.v.data(), c.d_num.data(),
                                  nullptr, dq_ref.data(), dk_ref.data(), dv_ref.data());
  check_close("dq (no d_den)", dq, dq_ref, kTolBackward);
  check_close("dk (no d_den)", dk, dk_ref, kTolBackward);
  check_close("dv (no d_den)", dv, dv_ref, kTolBackward);
}

}  // namespace

TEST_CASE("linear_attention: chunked causal and global forms equal the naive masked T×T form") {
  std::mt19937 gen(11);
  for (int64_t D : {32, 60, 64})
    for (int64_t T : {1, 63, 64, 65, 197}) {
      for (int64_t chunk : {1, 16, 64}) {
        if (chunk == 1 && T > 65) continue;  // chunk 1 is covered at T <= 65; keeps the file fast
        CAPTURE(D);
        CAPTURE(T);
        CAPTURE(chunk);
        compare_with_naive({2, T, 2, D}, true, chunk, gen, chunk == 16);
      }
      CAPTURE(D);
      CAPTURE(T);
      compare_with_naive({2, T, 2, D}, false, 64, gen, true);
    }
}

TEST_CASE("linear_attention: every compiled head width (16, 128) equals the naive form") {
  std::mt19937 gen(14);
  for (int64_t D : {16, 128})
    for (bool causal : {true, false}) {
      CAPTURE(D);
      CAPTURE(causal);
      compare_with_naive({2, 65, 2, D}, causal, 16, gen, true);
    }
}

TEST_CASE("linear_attention: backward equals central differences of the f64 naive forward") {
  std::mt19937 gen(12);
  const AttentionDims d{1, 5, 2, 4};
  for (bool causal : {true, false})
    for (int64_t chunk : {1, 2, 64}) {
      CAPTURE(causal);
      CAPTURE(chunk);
      Case c(d, gen);
      const size_t n = c.q.size();
      std::vector<float> dq(n), dk(n), dv(n);
      linear_attention_backward(d, causal, chunk, c.q.data(), c.k.data(), c.v.data(),
                                c.d_num.data(), c.d_den.data(), dq.data(), dk.data(), dv.data());
      std::vector<double> q = to_double(c.q), k = to_double(c.k), v = to_double(c.v);
      const std::vector<double> w_num = to_double(c.d_num), w_den = to_double(c.d_den);
      std::vector<double> num(n), den(w_den.size());
      auto loss = [&] {
        linear_attention_forward_naive(d, causal, q.data(), k.data(), v.data(), num.data(),
                                       den.data());
        return weighted_sum(w_num, num) + weighted_sum(w_den, den);
      };
      check_close("dq vs finite differences", dq, finite_difference(q, loss), kTolFiniteDiff);
      check_close("dk vs finite differences", dk, finite_difference(k, loss), kTolFiniteDiff);
      check_close("dv vs finite differences", dv, finite_difference(v, loss), kTolFiniteDiff);
    }
}

TEST_CASE("linear_attention: causal outputs at positions <= t ignore inputs after t, bit for bit") {
  std::mt19937 gen(13);
  const int64_t C = 16;
  for (int64_t T : {C - 1, C, C + 1, 3 * C + 5}) {
    const AttentionDims d{2, T, 2, 8};
    Case c(d, gen);
    const size_t n = c.q.size(), nd = c.d_den.size();
    std::vector<float> num(n), den(nd);
    linear_attention_forward(d, true, C, c.q.data(), c.k.data(), c.v.data(), num.data(),
                             den.data());
    for (int64_t t : {int64_t(0), C - 2, C - 1, C, T - 2}) {
      if (t < 0 || t >= T - 1) continue;
      CAPTURE(T);
      CAPTURE(t);
      std::vector<float> q = c.q, k = c.k, v = c.v, num2(n), den2(nd);
      perturb_after(q, d, t, gen);
      perturb_after(k, d, t, gen);
      perturb_after(v, d, t, gen);
      linear_attention_forward(d, true, C, q.data(), k.data(), v.data(), num2.data(), den2.data());
      CHECK(rows_identical(num, num2, d, d.d_head, t));
      CHECK(rows_identical(den, den2, d, 1, t));
      CHECK(!rows_identical(num, num2, d, d.d_head,
                            T - 1));  // the perturbation does reach later rows
    }
  }
}

TEST_CASE("linear_attention: bad arguments throw ShapeError naming the op") {
  std::vector<float> x(8);
  CHECK_THROWS_AS(linear_attention_forward({1, 2, 1, 4}, true, 0, x.data(), x.data(), x.data(),
                                           x.data(), nullptr),
                  ShapeError);
  CHECK_THROWS_WITH(linear_attention_forward({1, 2, 1, 0}, true, 4, x.data(), x.data(), x.data(),
                                             x.data(), nullptr),
                    doctest::Contains("[linear_attention_forward]"));
}
