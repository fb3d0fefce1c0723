// linear_attention: chunked/global fast form against the masked T×T naive form, finite differences,
// causality, for q/k as wide as v (d_key 0) and of another width (d_key = K, as feature maps give).
// Legend: B batch, T seq_len, H n_heads, K key width, D d_head, C chunk.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "layers/attention/kernels/linear_attention.h"
#include "layers/attention/kernels/softmax_attention.h"
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
    const size_t n = size_t(attention_numel(d)), nk = size_t(attention_key_numel(d)),
                 nd = size_t(d.batch * d.seq_len * d.n_heads);
    q = random_normal(nk, gen);
    k = random_normal(nk, gen);
    v = random_normal(n, gen);
    d_num = random_normal(n, gen);
    d_den = random_normal(nd, gen);
  }
};

void compare_with_naive(const AttentionDims& d, bool causal, int64_t chunk, std::mt19937& gen,
                        bool check_optional_den = false) {
  Case c(d, gen);
  const size_t nk = c.q.size(), n = c.v.size(), nd = c.d_den.size();
  std::vector<float> num(n), den(nd), num_ref(n), den_ref(nd);
  linear_attention_forward(d, causal, chunk, c.q.data(), c.k.data(), c.v.data(), num.data(),
                           den.data());
  linear_attention_forward_naive(d, causal, c.q.data(), c.k.data(), c.v.data(), num_ref.data(),
                                 den_ref.data());
  check_close("num", num, num_ref, kTolForward);
  check_close("den", den, den_ref, kTolForward);

  // 7: overwrite check
  std::vector<float> dq(nk, 7.f), dk(nk, 7.f), dv(n, 7.f), dq_ref(nk), dk_ref(nk), dv_ref(n);
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

// Every width run_at_width compiles (16, 32, 64, 128) and a runtime one (60), at T 65 (four chunks
// of 16 and a partial one). The test the QEMU runs of the ISA clones use (CMakeLists.txt): the T
// grid above is ISA-independent logic, checked natively.
TEST_CASE("linear_attention: every head width (16, 32, 60, 64, 128) equals the naive form") {
  std::mt19937 gen(14);
  for (int64_t D : {16, 32, 60, 64, 128})
    for (bool causal : {true, false}) {
      CAPTURE(D);
      CAPTURE(causal);
      compare_with_naive({2, 65, 2, D}, causal, 16, gen, true);
    }
}

TEST_CASE("linear_attention: q/k wider or narrower than v (d_key != d_head) equal the naive form") {
  std::mt19937 gen(15);
  // (K, D): Performer-like (16, 8), cosFormer-like (64, 32), odd runtime widths (12, 8), (12, 7),
  // (7, 12), then every compiled pair with K != D.
  const int64_t pairs[][2] = {{16, 8},  {64, 32},  {12, 8},  {12, 7},  {7, 12},
                              {32, 16}, {128, 64}, {16, 32}, {16, 64}, {64, 16}};
  for (const auto& pair : pairs) {
    const int64_t K = pair[0], D = pair[1];
    // Pairs with a narrow side over the whole T × chunk grid; wide pairs at T = 65 (5 chunks of
    // 16).
    const bool full = K <= 16 || D <= 12;
    for (int64_t T : {1, 37, 65}) {
      if (!full && T != 65) continue;
      for (int64_t chunk : {1, 16, 64}) {
        if (chunk == 1 && (T > 37 || !full)) continue;
        CAPTURE(K);
        CAPTURE(D);
        CAPTURE(T);
        CAPTURE(chunk);
        compare_with_naive({2, T, 2, D, K}, true, chunk, gen, chunk == 16);
      }
      CAPTURE(K);
      CAPTURE(D);
      CAPTURE(T);
      compare_with_naive({2, T, 2, D, K}, false, 64, gen, true);
    }
  }
}

TEST_CASE("linear_attention: d_key = d_head gives the bits of d_key = 0") {
  std::mt19937 gen(16);
  for (int64_t D : {16, 24})
    for (bool causal : {true, false}) {
      const AttentionDims d0{2, 40, 2, D}, d1{2, 40, 2, D, D};
      Case c(d0, gen);
      const size_t n = c.q.size(), nd = c.d_den.size();
      std::vector<float> num0(n), den0(nd), num1(n), den1(nd), g0(3 * n), g1(3 * n);
      linear_attention_forward(d0, causal, 16, c.q.data(), c.k.data(), c.v.data(), num0.data(),
                               den0.data());
      linear_attention_forward(d1, causal, 16, c.q.data(), c.k.data(), c.v.data(), num1.data(),
                               den1.data());
      linear_attention_backward(d0, causal, 16, c.q.data(), c.k.data(), c.v.data(), c.d_num.data(),
                                c.d_den.data(), g0.data(), g0.data() + n, g0.data() + 2 * n);
      linear_attention_backward(d1, causal, 16, c.q.data(), c.k.data(), c.v.data(), c.d_num.data(),
                                c.d_den.data(), g1.data(), g1.data() + n, g1.data() + 2 * n);
      CHECK(num0 == num1);
      CHECK(den0 == den1);
      CHECK(g0 == g1);
    }
}

TEST_CASE("linear_attention: backward equals central differences of the f64 naive forward") {
  std::mt19937 gen(12);
  for (int64_t d_key : {0, 3, 7})
    for (bool causal : {true, false})
      for (int64_t chunk : {1, 2, 64}) {
        const AttentionDims d{1, 5, 2, 4, d_key};
        CAPTURE(d_key);
        CAPTURE(causal);
        CAPTURE(chunk);
        Case c(d, gen);
        const size_t nk = c.q.size(), n = c.v.size();
        std::vector<float> dq(nk), dk(nk), dv(n);
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
  for (int64_t d_key : {0, 16})
    for (int64_t T : {C - 1, C, C + 1, 3 * C + 5}) {
      const AttentionDims d{2, T, 2, 8, d_key};
      const int64_t K = key_width(d);
      CAPTURE(d_key);
      Case c(d, gen);
      const size_t n = c.v.size(), nd = c.d_den.size();
      std::vector<float> num(n), den(nd);
      linear_attention_forward(d, true, C, c.q.data(), c.k.data(), c.v.data(), num.data(),
                               den.data());
      for (int64_t t : {int64_t(0), C - 2, C - 1, C, T - 2}) {
        if (t < 0 || t >= T - 1) continue;
        CAPTURE(T);
        CAPTURE(t);
        std::vector<float> q = c.q, k = c.k, v = c.v, num2(n), den2(nd);
        perturb_after(q, d, t, gen, K);
        perturb_after(k, d, t, gen, K);
        perturb_after(v, d, t, gen);
        linear_attention_forward(d, true, C, q.data(), k.data(), v.data(), num2.data(),
                                 den2.data());
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
  CHECK_THROWS_AS(linear_attention_forward({1, 2, 1, 4, -1}, true, 4, x.data(), x.data(), x.data(),
                                           x.data(), nullptr),
                  ShapeError);
}

TEST_CASE("attention kernels other than linear_attention reject d_key != d_head") {
  std::vector<float> x(64);
  CHECK_NOTHROW(check_attention_dims("op", {1, 2, 1, 4, 4}));
  CHECK_NOTHROW(check_attention_dims_any_key("op", {1, 2, 1, 4, 8}));
  CHECK_THROWS_WITH(check_attention_dims("op", {1, 2, 1, 4, 8}), doctest::Contains("[op] q and k"));
  CHECK_THROWS_AS(softmax_attention_forward({1, 2, 1, 4, 8}, true, nullptr, x.data(), x.data(),
                                            x.data(), x.data(), x.data()),
                  ShapeError);
  CHECK(key_width({1, 2, 1, 4}) == 4);
  CHECK(key_width({1, 2, 1, 4, 16}) == 16);
  CHECK(attention_key_numel({2, 3, 4, 5, 6}) == 2 * 3 * 4 * 6);
}
