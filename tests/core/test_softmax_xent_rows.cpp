// The fused row kernel of the LM-head loss against its double-precision reference.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/runtime/dnnl/bf16.h"
#include "core/runtime/ignore_index.h"
#include "core/runtime/ops/softmax_xent_rows.h"

using namespace tn;

TEST_CASE("softmax_xent_rows: NLL and softmax − onehot equal the double reference, f32 and bf16") {
  std::mt19937 gen(17);
  std::normal_distribution<float> normal(0.f, 4.f);
  for (int64_t cols : {1, 15, 16, 17, 333, 5000}) {
    const int64_t rows = 9;
    std::vector<float> logits(rows * cols);
    for (float& x : logits) x = normal(gen);
    std::vector<int32_t> targets(rows);
    for (int64_t i = 0; i < rows; ++i)
      targets[i] = i == 3 ? kIgnoreIndex : static_cast<int32_t>((i * 7919) % cols);
    std::vector<float> ref_grad(rows * cols);
    const XentRows ref = softmax_xent_rows_naive(logits.data(), rows, cols, targets.data(),
                                                 ref_grad.data());
    INFO("cols " << cols);
    CHECK(ref.n_targets == rows - 1);

    std::vector<float> work = logits;  // loss only: the logits are only read
    const XentRows loss_only =
        softmax_xent_rows(work.data(), rows, cols, targets.data(), nullptr, nullptr);
    CHECK(work == logits);
    CHECK(loss_only.n_targets == ref.n_targets);
    CHECK(loss_only.sum_nll == doctest::Approx(ref.sum_nll).epsilon(1e-6));

    work = logits;  // f32 gradient in place, and its bf16 rounding at the same time
    std::vector<uint16_t> g16(rows * cols, 0xFFFF);
    const XentRows both =
        softmax_xent_rows(work.data(), rows, cols, targets.data(), work.data(), g16.data());
    CHECK(both.sum_nll == doctest::Approx(ref.sum_nll).epsilon(1e-6));
    double worst = 0;
    for (int64_t i = 0; i < rows * cols; ++i) worst = std::max(worst, double(std::abs(work[i] - ref_grad[i])));
    // Why 1e-6 (u = 2^-24; g_j = p_j − [j = t] with p_j <= 1): exp_nonpositive is within 3 ulp,
    // rounding x_j − max adds |x_j − max|·u·p_j <= u/e, and 1/sum and e_j·(1/sum) add 2u; the
    // f32 sum of the e_j dominates at 5000 columns. Its worst case, (m + log2 L)·u relative for L
    // lanes of m = cols/L terms (1.9e-5 for the 16 fixed lanes of exp_sum), is not approached
    // because its rounding errors mostly cancel: at 5000 columns the worst |Δg| here is 3.6e-7 on
    // every instruction set (x86-64, -v3 and -v4 clones alike, the lanes being fixed), about
    // 1.6·√m·u·p. Summed in one lane it is 4.4e-6, and in SSE's 4 lanes 1.1e-6: this bound caught
    // both (AVX2 before fast_exp.h's select_float, the portable baseline before exp_sum).
    CHECK(worst < 1e-6);
    int bad_rounding = 0;
    for (int64_t i = 0; i < rows * cols; ++i) bad_rounding += g16[i] != to_bf16_bits(work[i]);
    CHECK(bad_rounding == 0);
    for (int64_t j = 0; j < cols; ++j) {  // the ignored row
      CHECK(work[3 * cols + j] == 0.0f);
      CHECK(g16[3 * cols + j] == 0);
    }

    std::vector<uint16_t> only16(rows * cols);  // bf16 alone: the logits are only read
    work = logits;
    softmax_xent_rows(work.data(), rows, cols, targets.data(), nullptr, only16.data());
    CHECK(only16 == g16);
    CHECK(work == logits);

    work = logits;  // a mean loss scales the gradient by 1/n
    softmax_xent_rows(work.data(), rows, cols, targets.data(), work.data(), nullptr, 0.125f);
    worst = 0;
    for (int64_t i = 0; i < rows * cols; ++i)
      worst = std::max(worst, double(std::abs(work[i] - 0.125f * ref_grad[i])));
    CHECK(worst < 1e-6);
  }
}

TEST_CASE("softmax_xent_rows: huge and equal logits stay finite, a NaN logit makes the loss NaN") {
  std::vector<float> x = {1000.f, 1000.f, -1000.f, 0.f};
  std::vector<int32_t> t = {0};
  std::vector<float> g(4);
  const XentRows r = softmax_xent_rows(x.data(), 1, 4, t.data(), g.data(), nullptr);
  CHECK(r.sum_nll == doctest::Approx(std::log(2.0)));
  CHECK(g[0] == doctest::Approx(-0.5));
  CHECK(g[1] == doctest::Approx(0.5));
  CHECK(g[2] == 0.0f);
  std::vector<float> y = {0.f, NAN, 1.f};
  CHECK(std::isnan(softmax_xent_rows(y.data(), 1, 3, t.data(), nullptr, nullptr).sum_nll));
}
