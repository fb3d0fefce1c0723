#include <doctest/doctest.h>

#include <cmath>

#include "core/runtime/optim/adamw.h"

using namespace tn;

TEST_CASE("adamw: two steps by hand (torch.optim.AdamW formulas)") {
  Var p = make_var(Tensor::from({2}, {1.0f, -2.0f}), true);
  AdamW opt({{"p", p}}, {0.9, 0.98, 1e-8, 0.01});
  p->grad_buf().data()[0] = 0.5f;
  p->grad().data()[1] = -1.0f;
  opt.step(0.1);
  // step 1: p *= 1 - lr*wd; m = 0.1 g; v = 0.02 g²; p -= lr/0.1 * m / (sqrt(v)/sqrt(0.02) + eps) = lr*sign(g)
  CHECK(p->value.data()[0] == doctest::Approx(1.0 * (1 - 0.001) - 0.1).epsilon(1e-6));
  CHECK(p->value.data()[1] == doctest::Approx(-2.0 * (1 - 0.001) + 0.1).epsilon(1e-6));
  double p0 = p->value.data()[0];
  p->grad().data()[0] = 0.25f;
  opt.step(0.1);
  const double m = 0.9 * 0.05 + 0.1 * 0.25, v = 0.98 * 0.02 * 0.25 + 0.02 * 0.0625;
  const double expected = p0 * (1 - 0.001) - (0.1 / (1 - 0.81)) * m / (std::sqrt(v) / std::sqrt(1 - 0.98 * 0.98) + 1e-8);
  CHECK(p->value.data()[0] == doctest::Approx(expected).epsilon(1e-6));
}

TEST_CASE("clip_grad_norm: global norm, and scaling only above max_norm") {
  Var a = make_var(Tensor::from({2}, {3.0f, 0.0f}), true), b = make_var(Tensor::from({1}, {4.0f}), true);
  a->grad_buf().copy_from(Tensor::from({2}, {3.0f, 0.0f}));
  b->grad_buf().copy_from(Tensor::from({1}, {4.0f}));
  CHECK(clip_grad_norm({{"a", a}, {"b", b}}, 10.0) == doctest::Approx(5.0));
  CHECK(a->grad().data()[0] == doctest::Approx(3.0));
  CHECK(clip_grad_norm({{"a", a}, {"b", b}}, 1.0) == doctest::Approx(5.0));
  CHECK(b->grad().data()[0] == doctest::Approx(4.0 / 5.0).epsilon(1e-5));
}
