// The attention ops' backwards hold only what they read (core/runtime/autograd/tape.h): linear
// attention's num and den are released once divided, the division keeps its quotient, and
// mask_rows copies nothing when no row is padding. Gradients by finite differences.
#include <doctest/doctest.h>

#include <memory>
#include <tuple>
#include <vector>

#include "core/runtime/autograd/grad_check.h"
#include "core/runtime/ops/eltwise.h"
#include "core/runtime/rng.h"
#include "layers/attention/attention_ops.h"

using namespace tn;

namespace {

Tensor randn(const Shape& shape, Rng& rng, double scale = 1.0, double shift = 0.0) {
  Tensor t = Tensor::empty(shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<float>(rng.normal() * scale + shift);
  return t;
}

}  // namespace

TEST_CASE("divide_by_denominator: gradients of num and den by finite differences, from the quotient") {
  Rng rng(5);
  // B 2, T 3, H 2, d_head 4; den in [0.5, 1.5], away from the eps clamp.
  Var num = make_var(randn({2, 3, 8}, rng), true);
  Var den = make_var(randn({2, 3, 2}, rng, 0.2, 1.0), true);
  const Tensor r = randn({2, 3, 8}, rng);
  const GradCheckResult res = grad_check(
      [&](Tape& t) { return weighted_loss(t, divide_by_denominator(t, num, den, 1e-6f), r); }, {num, den},
      GradCheckOptions{.eps = 1e-2, .richardson = true});
  INFO(res.worst);
  // Hand bound: the quotient's second derivative in den is 2·num/den³ ≤ 2·3/0.5³ = 48; Richardson
  // leaves O(eps⁴) truncation, and the f32 rounding of the outputs over the step is ~1e-5 here.
  CHECK(res.max_rel_error < 1e-3);
}

TEST_CASE("linear attention ops: num is released by the forward and den kept for the division, gradients unchanged") {
  Rng rng(6);
  const Tensor q0 = randn({1, 6, 8}, rng), k0 = randn({1, 6, 8}, rng), v0 = randn({1, 6, 8}, rng);
  const Tensor r = randn({1, 6, 8}, rng);
  auto run = [&](bool hold, std::vector<std::weak_ptr<Variable>>& seen) {
    Var qp = make_var(q0.clone(), true), kp = make_var(k0.clone(), true), v = make_var(v0.clone(), true);
    Tape t;
    std::vector<Var> keep;
    Var loss;
    {
      Var q = eltwise(t, qp, Eltwise::OnePlusElu), k = eltwise(t, kp, Eltwise::OnePlusElu);
      LinearAttentionOut terms = linear_attention(t, q, k, v, 2, /*causal=*/true, 4, /*with_den=*/true);
      Var o = divide_by_denominator(t, terms.num, terms.den, 1e-6f);
      seen = {terms.num, terms.den, o};
      if (hold) keep = {terms.num, terms.den};
      loss = weighted_sum(t, o, r);
    }
    const bool num_gone = seen[0].expired();
    const bool den_kept = !seen[1].expired();  // the division reads den
    t.backward(loss);
    std::vector<float> g = qp->grad().to_vector();
    for (const Var& x : {kp, v}) {
      const std::vector<float> one = x->grad().to_vector();
      g.insert(g.end(), one.begin(), one.end());
    }
    return std::make_tuple(num_gone, den_kept, g);
  };
  std::vector<std::weak_ptr<Variable>> seen;
  const auto [num_gone, den_kept, released] = run(false, seen);
  CHECK(num_gone);
  CHECK(den_kept);
  const auto [num_gone_held, den_kept_held, held] = run(true, seen);  // the control: num held by the caller
  CHECK(released == held);
}

TEST_CASE("mask_rows: no copy when every row is valid, and a padded row is zeroed and gets no gradient") {
  Rng rng(8);
  Var x = make_var(randn({2, 3, 4}, rng), true);
  Tape t;
  const std::vector<uint8_t> all(6, 1);
  CHECK(mask_rows(t, x, &all) == x);
  CHECK(t.size() == 0);
  const std::vector<uint8_t> padded = {1, 1, 0, 1, 0, 0};
  const Tensor r = randn({2, 3, 4}, rng);
  Var y = mask_rows(t, x, &padded);
  for (int64_t row = 0; row < 6; ++row)
    for (int64_t j = 0; j < 4; ++j)
      CHECK(y->value.data()[row * 4 + j] == (padded[row] ? x->value.data()[row * 4 + j] : 0.0f));
  t.backward(weighted_sum(t, y, r));
  for (int64_t row = 0; row < 6; ++row)
    for (int64_t j = 0; j < 4; ++j)
      CHECK(x->grad().data()[row * 4 + j] == (padded[row] ? r.data()[row * 4 + j] : 0.0f));
}
