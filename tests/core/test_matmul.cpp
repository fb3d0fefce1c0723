#include <doctest/doctest.h>

#include <cmath>
#include <omp.h>
#include <random>
#include <string>
#include <vector>

#include "core/runtime/dnnl/bf16.h"
#include "core/runtime/dnnl/matmul.h"
#include "core/runtime/dnnl/matmul_tiling.h"

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

TEST_CASE("matmul tiles: every tile equals the naive loop, and C has the same bits on 1, 2 and 3 threads") {
  // Products cut into tiles of C (core/runtime/dnnl/matmul_tiling.h): 520 rows in row tiles (2 of a plain
  // A, 3 of a transposed one); 40 rows by a wide product in column tiles (a strided B unless
  // transposed, and a strided C); every transpose, accumulate and bias, in f32 and bf16. Tolerance: the worst-case error of an f32 sum
  // of k products, k·2⁻²³·Σ|a||b|, against the naive loop in double on the same (rounded) operands.
  struct RestoreThreads {  // even when a REQUIRE ends the test early
    int saved = omp_get_max_threads();
    ~RestoreThreads() { omp_set_num_threads(saved); }
  } restore;
  std::mt19937 gen(11);
  std::normal_distribution<float> normal;
  for (const MatmulShape base : {MatmulShape{.m = 520, .n = 96, .k = 512}, MatmulShape{.m = 40, .n = 1100, .k = 1000}})
    for (bool bf16 : {false, true})
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (bool acc : {false, true}) {
            MatmulShape s = base;
            s.trans_a = ta;
            s.trans_b = tb;
            s.accumulate = acc;
            s.bias = !acc;
            s.bf16 = bf16;
            const MatmulTiling t = matmul_tiling(s);
            REQUIRE(t.count() > 1);
            CHECK((s.m == 40) == (t.col_tiles > 1));
            std::vector<float> a(s.m * s.k), b(s.k * s.n), c0(s.m * s.n), bias(s.n);
            for (auto* v : {&a, &b, &c0, &bias})
              for (float& x : *v) x = normal(gen);
            if (bf16)
              for (auto* v : {&a, &b})
                for (float& x : *v) x = from_bf16_bits(to_bf16_bits(x));
            std::vector<std::vector<float>> runs;
            for (int threads : {1, 2, 3}) {
              omp_set_num_threads(threads);
              runs.push_back(c0);
              matmul(s, a.data(), b.data(), runs.back().data(), s.bias ? bias.data() : nullptr);
            }
            const std::string what = "m " + std::to_string(s.m) + " bf16 " + std::to_string(bf16) + " ta " +
                                     std::to_string(ta) + " tb " + std::to_string(tb) + " acc " + std::to_string(acc);
            CHECK_MESSAGE(runs[1] == runs[0], what);  // bit for bit
            CHECK_MESSAGE(runs[2] == runs[0], what);
            std::vector<float> ref = c0, abs_a(a.size()), abs_b(b.size()), bound(c0.size(), 0.f);
            MatmulShape f32 = s;
            f32.bf16 = false;
            f32.accumulate = false;
            f32.bias = false;
            for (size_t i = 0; i < a.size(); ++i) abs_a[i] = std::fabs(a[i]);
            for (size_t i = 0; i < b.size(); ++i) abs_b[i] = std::fabs(b[i]);
            matmul_naive(f32, abs_a.data(), abs_b.data(), bound.data());
            matmul_naive(s, a.data(), b.data(), ref.data(), s.bias ? bias.data() : nullptr);
            int bad = 0;
            for (size_t i = 0; i < ref.size(); ++i) {
              const double tol = s.k * std::ldexp(1.0, -23) * bound[i] + 1e-6 * std::fabs(ref[i]);
              bad += std::fabs(double(runs[0][i]) - double(ref[i])) > tol;
            }
            CHECK_MESSAGE(bad == 0, what);
          }
}

TEST_CASE("matmul_tiling: a function of the shape alone, rows or columns, at least 2^24 flops a tile") {
  const MatmulTiling small = matmul_tiling({.m = 4096, .n = 32, .k = 32});  // 2^23 flops: whole
  CHECK(small.count() == 1);
  CHECK(small.rows == 4096);
  const MatmulTiling rows = matmul_tiling({.m = 2048, .n = 128, .k = 128});  // 2^26 flops: 4 row tiles
  CHECK(rows.row_tiles == 4);
  CHECK(rows.rows == 512);
  CHECK(rows.col_tiles == 1);
  const MatmulTiling head = matmul_tiling({.m = 17488, .n = 128, .k = 512, .trans_a = true});
  CHECK(head.row_tiles <= 64);
  CHECK(head.rows % 16 == 0);
  CHECK(head.rows * head.row_tiles >= 17488);
  CHECK(head.rows * (head.row_tiles - 1) < 17488);
  const MatmulTiling narrow = matmul_tiling({.m = 128, .n = 128, .k = 2048, .trans_a = true});
  CHECK(narrow.rows == 64);  // 2^26 flops: 2 row tiles of 64 (too few columns to cut)
  CHECK(narrow.cols == 128);
  CHECK(narrow.count() == 2);
  const MatmulTiling deep = matmul_tiling({.m = 512, .n = 512, .k = 50000});  // 2 rows or 2 columns
  CHECK(deep.rows == 256);  // a tie: rows
  CHECK(deep.row_tiles == 2);
  CHECK(deep.col_tiles == 1);
  const MatmulTiling logits = matmul_tiling({.m = 512, .n = 17488, .k = 128, .trans_b = true});
  CHECK(logits.row_tiles == 1);  // 2 row tiles against 64 column tiles: columns
  CHECK(logits.cols == 288);
  CHECK(logits.col_tiles == 61);
  CHECK(matmul_tiling({.batch = 3, .m = 8, .n = 8, .k = 8}).count() == 3);  // each matrix alone
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

/// Whether `got` equals `ref` within the f32 rounding of a sum of `terms` terms whose absolute
/// values add up to `bound` (element by element): a summation in another order.
bool within_summation_order(const std::vector<float>& got, const std::vector<float>& ref,
                            const std::vector<float>& bound, int64_t terms) {
  for (size_t i = 0; i < got.size(); ++i)
    if (std::fabs(got[i] - ref[i]) > static_cast<float>(terms) * 0x1p-23f * bound[i]) return false;
  return true;
}

TEST_CASE("matmul bf16: exactly the f32 primitive on the rounded operands (with a native kernel: up to summation order)") {
  // bf16 × bf16 products are exact in f32, so the f32 primitive on the rounded operands is the
  // reference: equal bit for bit where bf16 is emulated, and within the rounding of a sum taken in
  // another order where AVX-512 BF16 computes it natively.
  const bool native = bf16_matmul_native();
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
      if (native) {
        std::vector<float> a_abs = a_r, b_abs = b_r, bound = c, bias_abs = bias;  // the sum of |terms|
        for (auto* v : {&a_abs, &b_abs, &bound, &bias_abs})
          for (float& x : *v) x = std::fabs(x);
        matmul(f32, a_abs.data(), b_abs.data(), bound.data(), bias_abs.data());
        CHECK(within_summation_order(from_f32, ref, bound, s.k + 2));
        CHECK(within_summation_order(from_bf16, ref, bound, s.k + 2));
      } else {
        CHECK(from_f32 == ref);
        CHECK(from_bf16 == ref);
      }
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
