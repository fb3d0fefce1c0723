// What a backward closure holds (core/runtime/autograd/tape.h): a value only while some backward
// reads it, a gradient (GradRef) where the value is not read. A value released this way goes back
// to the pool during the forward; the gradients are the same bits as when the caller holds it.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "core/error.h"
#include "core/runtime/autograd/grad_check.h"
#include "core/runtime/ops/activation_linear.h"
#include "core/runtime/ops/elementwise.h"
#include "core/runtime/ops/eltwise.h"
#include "core/runtime/ops/linear.h"
#include "core/runtime/ops/swiglu.h"
#include "core/runtime/rng.h"

using namespace tn;

namespace {

Tensor randn(const Shape& shape, Rng& rng) {
  Tensor t = Tensor::empty(shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<float>(rng.normal());
  return t;
}

struct Net {
  Var x, w, b;
  Tensor r;
  explicit Net(uint64_t seed) {
    Rng rng(seed);
    x = make_var(randn({3, 5, 8}, rng), true);
    w = make_var(randn({8, 8}, rng), true);
    b = make_var(randn({8}, rng), true);
    r = randn({3, 5, 8}, rng);
  }
  /// loss = Σ r ⊙ (x + f(x W' + b)), the intermediates reported through `seen`; `keep` holds them.
  Var loss(Tape& t, Eltwise f, std::vector<std::weak_ptr<Variable>>& seen, std::vector<Var>* keep) {
    Var h = linear(t, x, w, b);
    Var a = eltwise(t, h, f);
    Var y = add(t, x, a);
    seen = {h, a};
    if (keep) *keep = {h, a};
    return weighted_sum(t, y, r);
  }
};

std::vector<float> grads(const Net& n) {
  std::vector<float> g;
  for (const Var& v : {n.x, n.w, n.b}) {
    const std::vector<float> one = v->grad().to_vector();
    g.insert(g.end(), one.begin(), one.end());
  }
  return g;
}

}  // namespace

TEST_CASE("tape: a linear's output feeding 1+ELU and a sum is released by the forward, gradients unchanged") {
  for (Eltwise f : {Eltwise::OnePlusElu, Eltwise::Elu, Eltwise::Relu}) {
    Net released(3), held(3);
    std::vector<std::weak_ptr<Variable>> seen;
    std::vector<Var> keep;
    Tape t1, t2;
    Var l1 = released.loss(t1, f, seen, nullptr);
    // Backward of f reads f's output; the linear's and the sum's read no output: only f's output
    // (read by f's backward) is still alive, and the linear's output h is gone.
    CHECK(seen[0].expired());
    CHECK_FALSE(seen[1].expired());
    t1.backward(l1);
    Var l2 = held.loss(t2, f, seen, &keep);  // the control: the caller holds h and f(h)
    t2.backward(l2);
    CHECK(grads(released) == grads(held));  // the same bits
  }
}

TEST_CASE("tape: GELU and SiLU keep their input (their derivative needs it), and their output goes") {
  for (Eltwise f : {Eltwise::Gelu, Eltwise::Silu}) {
    Net n(4);
    std::vector<std::weak_ptr<Variable>> seen;
    Tape t;
    Var l = n.loss(t, f, seen, nullptr);
    CHECK_FALSE(seen[0].expired());
    CHECK(seen[1].expired());
    t.backward(l);
    CHECK(n.x->has_grad());
  }
}

TEST_CASE("eltwise_backward_from_output: the derivative read off y = f(x) equals the one from x") {
  // Inputs on both sides of the kink and at it: at x = 0 ReLU' = 0 (PyTorch), ELU' = 1 from either side.
  std::vector<float> x = {-6.0f, -2.5f, -1.0f, -0.3f, -1e-4f, 0.0f, 1e-4f, 0.3f, 1.0f, 2.5f, 6.0f};
  Rng rng(7);
  for (int i = 0; i < 40; ++i) x.push_back(static_cast<float>(rng.normal() * 3.0));
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<float> dy(x.size());
  for (float& v : dy) v = static_cast<float>(rng.normal());
  for (Eltwise f : {Eltwise::Relu, Eltwise::Elu, Eltwise::OnePlusElu}) {
    REQUIRE(derivative_from_output(f));
    std::vector<float> y(x.size()), from_x(x.size()), from_y(x.size());
    eltwise_forward(f, x.data(), y.data(), n);
    eltwise_backward(f, x.data(), dy.data(), from_x.data(), n);
    eltwise_backward_from_output(f, y.data(), dy.data(), from_y.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      INFO("kind " << static_cast<int>(f) << " x " << x[i] << " from x " << from_x[i] << " from y " << from_y[i]);
      // f' ≤ 1, and each side is within one ulp of 1 (1.2e-7) of the true eˣ: oneDNN's eˣ, and
      // eˣ read as (eˣ − 1) + 1. Above the kink both are 1 exactly.
      const double err = std::abs(double(from_y[i]) - double(from_x[i]));
      CHECK(err <= 2.4e-7 * std::abs(double(dy[i])));
      if (x[i] > 0.0f) CHECK(from_y[i] == from_x[i]);
    }
  }
  for (Eltwise f : {Eltwise::Gelu, Eltwise::Silu, Eltwise::Tanh}) {
    CHECK_FALSE(derivative_from_output(f));
    std::vector<float> y(1), d(1), g(1, 1.0f);
    CHECK_THROWS_AS(eltwise_backward_from_output(f, y.data(), g.data(), d.data(), 1), ShapeError);
  }
}

TEST_CASE("tape: the SwiGLU op's output, feeding a residual sum, is released by the forward") {
  Rng rng(10);
  auto p = [&](const Shape& shape) { return make_var(randn(shape, rng), true); };
  Var x = p({4, 6});
  const SwiGluWeights w{p({10, 6}), p({10}), p({10, 6}), p({10}), p({6, 10}), p({6})};
  std::weak_ptr<Variable> mid;
  Tape t;
  Var loss;
  {
    Var h = swiglu(t, x, w);
    mid = h;
    loss = weighted_sum(t, add(t, x, h), randn({4, 6}, rng));
  }
  CHECK(mid.expired());
  t.backward(loss);
  CHECK(x->has_grad());
  CHECK(w.w3->has_grad());
}

TEST_CASE("tape: activation_linear's and add's gradients do not hold the values they do not read") {
  Rng rng(9);
  Var x = make_var(randn({4, 6}, rng), true), w = make_var(randn({6, 6}, rng), true);
  std::weak_ptr<Variable> mid;
  Tape t;
  Var loss;
  {
    Var h = activation_linear(t, x, Eltwise::Gelu, w, nullptr);
    mid = h;
    loss = weighted_sum(t, add(t, x, h), randn({4, 6}, rng));
  }
  CHECK(mid.expired());
  t.backward(loss);
  CHECK(x->has_grad());
  CHECK(w->has_grad());
}

TEST_CASE("GradRef: a null Var (an absent bias) gives an empty handle that wants no gradient") {
  const GradRef none{Var()};
  CHECK_FALSE(static_cast<bool>(none));
  CHECK_FALSE(none.requires_grad());
  Var x = make_var(Tensor::zeros({2, 3}), true);
  const GradRef some{x};
  CHECK(static_cast<bool>(some));
  CHECK(some.requires_grad());
  CHECK(some.shape() == Shape{2, 3});
}
