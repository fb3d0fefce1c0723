#include <doctest/doctest.h>

#include <cmath>
#include <omp.h>
#include <random>
#include <vector>

#include "core/dnnl/bf16.h"
#include "core/dnnl/matmul.h"

using namespace tn;

TEST_CASE("matmul: oneDNN equals the naive loop for every transpose, bias and accumulate") {
  std::mt19937 gen(3);
  std::normal_distribution<float> normal;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (bool acc : {false, true})
        for (bool bias : {false, true}) {
          MatmulShape s{.batch = 2, .m = 5, .n = 7, .k = 3, .trans_a = ta, .trans_b = tb,
                        .accumulate = acc, .bias = bias};
          std::vector<float> a(s.batch * s.m * s.k), b(s.batch * s.k * s.n), c(s.batch * s.m * s.n),
              bv(s.n);
          for (auto* v : {&a, &b, &c, &bv})
            for (float& x : *v) x = normal(gen);
          std::vector<float> c_ref = c;
          matmul(s, a.data(), b.data(), c.data(), bias ? bv.data() : nullptr);
          matmul_naive(s, a.data(), b.data(), c_ref.data(), bias ? bv.data() : nullptr);
          for (size_t i = 0; i < c.size(); ++i) CHECK(c[i] == doctest::Approx(c_ref[i]).epsilon(1e-5));
        }
}

TEST_CASE("matmul split across threads: every row block equals the naive loop") {
  // Products large enough to be split by rows of C (at least 128 rows a thread and 2^24 flops),
  // with 2 and 3 threads (520 rows: blocks of 272 + 248, and 176 + 176 + 168), every transpose,
  // accumulate and bias, in f32 and bf16. Tolerance: the worst-case error of an f32 sum of k
  // products, k·2⁻²³·Σ|a||b|, against the naive loop in double on the same (rounded) operands.
  struct RestoreThreads {  // even when a REQUIRE ends the test early
    int saved = omp_get_max_threads();
    ~RestoreThreads() { omp_set_num_threads(saved); }
  } restore;
  std::mt19937 gen(11);
  std::normal_distribution<float> normal;
  for (int threads : {2, 3})
    for (bool bf16 : {false, true})
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (bool acc : {false, true}) {
            omp_set_num_threads(threads);
            MatmulShape s{.m = 520, .n = 96, .k = 256, .trans_a = ta, .trans_b = tb,
                          .accumulate = acc, .bias = !acc, .bf16 = bf16};
            REQUIRE(matmul_split_parts(s) == threads);
            std::vector<float> a(s.m * s.k), b(s.k * s.n), c(s.m * s.n), bias(s.n);
            for (auto* v : {&a, &b, &c, &bias})
              for (float& x : *v) x = normal(gen);
            if (bf16)
              for (auto* v : {&a, &b})
                for (float& x : *v) x = from_bf16_bits(to_bf16_bits(x));
            std::vector<float> ref = c, abs_a(a.size()), abs_b(b.size()), bound(c.size(), 0.f);
            matmul(s, a.data(), b.data(), c.data(), s.bias ? bias.data() : nullptr);
            MatmulShape f32 = s;
            f32.bf16 = false;
            f32.accumulate = false;
            f32.bias = false;
            for (size_t i = 0; i < a.size(); ++i) abs_a[i] = std::fabs(a[i]);
            for (size_t i = 0; i < b.size(); ++i) abs_b[i] = std::fabs(b[i]);
            matmul_naive(f32, abs_a.data(), abs_b.data(), bound.data());
            matmul_naive(s, a.data(), b.data(), ref.data(), s.bias ? bias.data() : nullptr);
            int bad = 0;
            for (size_t i = 0; i < c.size(); ++i) {
              const double tol = s.k * std::ldexp(1.0, -23) * bound[i] + 1e-6 * std::fabs(ref[i]);
              bad += std::fabs(double(c[i]) - double(ref[i])) > tol;
            }
            CHECK_MESSAGE(bad == 0, "threads " << threads << " bf16 " << bf16 << " ta " << ta
                                               << " tb " << tb << " acc " << acc);
          }
  omp_set_num_threads(1);  // and whole on one thread: the same
  CHECK(matmul_split_parts({.m = 520, .n = 96, .k = 256}) == 1);
  omp_set_num_threads(2);  // too few rows or flops: whole
  CHECK(matmul_split_parts({.m = 255, .n = 4096, .k = 4096}) == 1);
  CHECK(matmul_split_parts({.m = 4096, .n = 32, .k = 32}) == 1);
  CHECK(matmul_split_parts({.batch = 2, .m = 4096, .n = 512, .k = 512}) == 1);
}

TEST_CASE("matmul bf16: operands rounded to bfloat16, f32 accumulation (relative error ~ 2^-8)") {
  std::mt19937 gen(5);
  std::normal_distribution<float> normal;
  for (bool tb : {false, true}) {
    MatmulShape s{.m = 33, .n = 65, .k = 130, .trans_b = tb, .bias = true};
    std::vector<float> a(s.m * s.k), b(s.k * s.n), c(s.m * s.n), ref(s.m * s.n), bias(s.n);
    for (auto* v : {&a, &b, &bias})
      for (float& x : *v) x = normal(gen);
    matmul_naive(s, a.data(), b.data(), ref.data(), bias.data());
    s.bf16 = true;
    matmul(s, a.data(), b.data(), c.data(), bias.data());
    double err = 0, norm = 0;
    for (size_t i = 0; i < c.size(); ++i) {
      err += (c[i] - ref[i]) * (c[i] - ref[i]);
      norm += ref[i] * ref[i];
    }
    const double rel = std::sqrt(err / norm);
    CHECK(rel < 1e-2);   // bf16 has 8 significant bits
    CHECK(rel > 1e-5);   // and it really ran in bf16, not f32
  }
}

TEST_CASE("matmul bf16 without a native kernel: exactly the f32 primitive on the rounded operands") {
  if (bf16_matmul_native()) return;  // AVX-512 BF16: the native kernel's summation order differs
  std::mt19937 gen(7);
  std::normal_distribution<float> normal;
  for (bool ta : {false, true})
    for (bool acc : {false, true}) {
      MatmulShape s{.batch = 2, .m = 9, .n = 11, .k = 40, .trans_a = ta, .trans_b = true,
                    .accumulate = acc, .bias = true, .bf16 = true};
      std::vector<float> a(s.batch * s.m * s.k), b(s.batch * s.k * s.n), c(s.batch * s.m * s.n),
          bias(s.n);
      for (auto* v : {&a, &b, &c, &bias})
        for (float& x : *v) x = normal(gen);
      std::vector<float> a_r(a.size()), b_r(b.size());
      std::vector<uint16_t> a16(a.size()), b16(b.size());
      for (size_t i = 0; i < a.size(); ++i) a_r[i] = from_bf16_bits(a16[i] = to_bf16_bits(a[i]));
      for (size_t i = 0; i < b.size(); ++i) b_r[i] = from_bf16_bits(b16[i] = to_bf16_bits(b[i]));
      MatmulShape f32 = s;
      f32.bf16 = false;
      std::vector<float> ref = c, from_f32 = c, from_bf16 = c;
      matmul(f32, a_r.data(), b_r.data(), ref.data(), bias.data());
      matmul(s, a.data(), b.data(), from_f32.data(), bias.data());            // rounds a and b
      matmul_bf16(s, a16.data(), b16.data(), from_bf16.data(), bias.data());  // widens them
      CHECK(from_f32 == ref);
      CHECK(from_bf16 == ref);
      CHECK(from_f32 != c);  // it wrote
    }
}

TEST_CASE("matmul recording: the shapes of the calls between begin and end, replayable") {
  std::vector<float> a(6 * 4, 1.0f), b(4 * 5, 1.0f), c(6 * 5);
  matmul({.m = 6, .n = 5, .k = 4}, a.data(), b.data(), c.data());  // not recorded
  matmul_record_begin();
  matmul({.m = 6, .n = 5, .k = 4}, a.data(), b.data(), c.data());  // c = 4 (4 products of 1s)
  matmul({.m = 5, .n = 4, .k = 6, .trans_a = true, .accumulate = true}, c.data(), a.data(),
         b.data());  // b = 1 + 6 · 4 = 25
  const std::vector<MatmulShape> shapes = matmul_record_end();
  CHECK(c == std::vector<float>(c.size(), 4.0f));
  CHECK(b == std::vector<float>(b.size(), 25.0f));
  matmul({.m = 6, .n = 5, .k = 4}, a.data(), b.data(), c.data());  // not recorded: c = 4 · 25
  REQUIRE(shapes.size() == 2);
  CHECK(shapes[0] == MatmulShape{.m = 6, .n = 5, .k = 4});
  CHECK(shapes[1] == MatmulShape{.m = 5, .n = 4, .k = 6, .trans_a = true, .accumulate = true});

  // The replay runs exactly the recorded products (recorded again while it runs), a bf16 one as
  // bf16 even where it is emulated, on its own scratch: the caller's operands are untouched.
  std::vector<MatmulShape> replayed = shapes;
  replayed.push_back({.m = 3, .n = 2, .k = 5, .trans_b = true, .bias = true, .bf16 = true});
  matmul_record_begin();
  const double seconds = matmul_replay_seconds(replayed);
  CHECK(matmul_record_end() == replayed);
  CHECK(seconds > 0.0);
  CHECK(c == std::vector<float>(c.size(), 100.0f));
  CHECK(b == std::vector<float>(b.size(), 25.0f));
}
