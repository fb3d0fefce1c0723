// Finite-difference gradient checks for every core op (f32 ops, the loss in double): the tolerance
// below allows the rounding noise of the differences, not a formula that is 1 % wrong.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/runtime/autograd/grad_accum.h"
#include "core/runtime/autograd/grad_check.h"
#include "core/runtime/dnnl/bf16.h"
#include "core/error.h"
#include "core/runtime/ops/cross_entropy.h"
#include "core/runtime/ops/elementwise.h"
#include "core/runtime/ops/sequence_pool.h"
#include "core/runtime/ops/eltwise.h"
#include "core/runtime/ops/embedding.h"
#include "core/runtime/ops/gather_rows.h"
#include "core/runtime/ops/layer_norm.h"
#include "core/runtime/ops/activation_linear.h"
#include "core/runtime/ops/linear.h"
#include "core/runtime/ops/lm_head_loss.h"
#include "core/runtime/ops/mse_loss.h"
#include "core/runtime/ops/rms_norm.h"
#include "core/runtime/ops/silu_gate.h"
#include "core/runtime/ops/swiglu.h"
#include "core/runtime/rng.h"

using namespace tn;

namespace {
// The loss in double (weighted_loss, an LmLoss's double sum), Richardson-extrapolated central
// differences over a step of 3e-2: the numeric gradients are within 7e-4 of the exact ones here
// (truncation O(eps⁴); the f32 forward's rounding noise over the step, ~2^-24·|outputs|/eps, is
// the rest). 2e-3 leaves a margin of 3 and rejects a gradient formula that is 1 % wrong (the last
// test). The ReLU and ELU inputs are kept 0.05 away from the kink, beyond the step.
const GradCheckOptions kFd{.eps = 3e-2, .richardson = true};
constexpr double kTol = 2e-3;  // max relative error

Tensor randn(const Shape& shape, Rng& rng, double scale = 1.0) {
  Tensor t = Tensor::empty(shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<float>(rng.normal() * scale);
  return t;
}
Var param(const Shape& shape, Rng& rng, double scale = 1.0) {
  return make_var(randn(shape, rng, scale), true);
}
/// A cross-entropy loss with its mean in double, for grad_check.
CheckLoss precise(const LmLoss& l) {
  return {l.loss, l.sum_nll / static_cast<double>(l.n_targets)};
}
}  // namespace

TEST_CASE("grad: linear with bias") {
  Rng rng(1);
  Var x = param({3, 4, 5}, rng), w = param({6, 5}, rng), b = param({6}, rng);
  Tensor r = randn({3, 4, 6}, rng);
  auto res =
      grad_check([&](Tape& t) { return weighted_loss(t, linear(t, x, w, b), r); }, {x, w, b}, kFd);
  INFO(res.worst);
  CHECK(res.max_rel_error < kTol);
}

TEST_CASE("grad: eltwise activations") {
  for (Eltwise kind : {Eltwise::Elu, Eltwise::OnePlusElu, Eltwise::Relu, Eltwise::Silu,
                       Eltwise::Gelu, Eltwise::Tanh}) {
    Rng rng(2);
    Var x = param({7, 9}, rng);
    for (int64_t i = 0; i < x->value.numel(); ++i) {  // keep finite differences off ReLU's kink
      float& v = x->value.data()[i];
      if (std::abs(v) < 0.05f) v += v < 0 ? -0.1f : 0.1f;
    }
    Tensor r = randn({7, 9}, rng);
    auto res =
        grad_check([&](Tape& t) { return weighted_loss(t, eltwise(t, x, kind), r); }, {x}, kFd);
    INFO("kind " << static_cast<int>(kind) << ": " << res.worst);
    CHECK(res.max_rel_error < kTol);
  }
}

TEST_CASE("grad: activation_linear (f then Linear, f(a) recomputed in the backward)") {
  for (Eltwise kind : {Eltwise::Gelu, Eltwise::Relu, Eltwise::Silu}) {
    Rng rng(3);
    Var a = param({2, 3, 5}, rng), w = param({4, 5}, rng), b = param({4}, rng);
    for (int64_t i = 0; i < a->value.numel(); ++i) {  // off ReLU's kink, beyond the step
      float& v = a->value.data()[i];
      if (std::abs(v) < 0.05f) v += v < 0 ? -0.1f : 0.1f;
    }
    Tensor r = randn({2, 3, 4}, rng);
    auto res = grad_check([&](Tape& t) { return weighted_loss(t, activation_linear(t, a, kind, w, b), r); },
                          {a, w, b}, kFd);
    INFO("kind " << static_cast<int>(kind) << ": " << res.worst);
    CHECK(res.max_rel_error < kTol);
  }
}

TEST_CASE("activation_linear: the values and gradients of eltwise then linear") {
  Rng rng(4);
  Var a = param({6, 8}, rng), w = param({3, 8}, rng), b = param({3}, rng);
  Tensor r = randn({6, 3}, rng);
  std::vector<std::vector<float>> grads[2];
  std::vector<float> values[2];
  for (int fused = 0; fused < 2; ++fused) {
    for (const Var& v : {a, w, b}) v->grad() = Tensor();
    Tape tape;
    Var y = fused ? activation_linear(tape, a, Eltwise::Gelu, w, b) : linear(tape, eltwise(tape, a, Eltwise::Gelu), w, b);
    values[fused].assign(y->value.data(), y->value.data() + y->value.numel());
    tape.backward(weighted_loss(tape, y, r).var);
    for (const Var& v : {a, w, b}) grads[fused].emplace_back(v->grad().data(), v->grad().data() + v->grad().numel());
  }
  CHECK(values[0] == values[1]);  // the same products in the same order
  for (size_t i = 0; i < 3; ++i)
    for (size_t j = 0; j < grads[0][i].size(); ++j) CHECK(grads[1][i][j] == doctest::Approx(grads[0][i][j]).epsilon(1e-5));
}

TEST_CASE("eltwise values: 1+elu, elu, silu, gelu(erf) by hand") {
  Tensor x = Tensor::from({4}, {-1.0f, 0.0f, 0.5f, 2.0f});
  Tensor y = Tensor::empty({4});
  eltwise_forward(Eltwise::OnePlusElu, x.data(), y.data(), 4);
  CHECK(y.data()[0] == doctest::Approx(std::exp(-1.0)));
  CHECK(y.data()[3] == doctest::Approx(3.0));
  eltwise_forward(Eltwise::Silu, x.data(), y.data(), 4);
  CHECK(y.data()[2] == doctest::Approx(0.5 / (1 + std::exp(-0.5))));
  eltwise_forward(Eltwise::Gelu, x.data(), y.data(), 4);
  CHECK(y.data()[0] == doctest::Approx(-0.5 * (1 + std::erf(-1 / std::sqrt(2.0)))));
}

TEST_CASE("swiglu: grad with and without biases, and x feeding it twice") {
  Rng rng(12);
  Var x = param({2, 3, 6}, rng), w1 = param({10, 6}, rng, 0.5), b1 = param({10}, rng),
      w2 = param({10, 6}, rng, 0.5), b2 = param({10}, rng), w3 = param({6, 10}, rng),
      b3 = param({6}, rng);
  Tensor r = randn({2, 3, 6}, rng);
  const SwiGluWeights w{w1, b1, w2, b2, w3, b3};
  auto res = grad_check([&](Tape& t) { return weighted_loss(t, swiglu(t, x, w), r); },
                        {x, w1, b1, w2, b2, w3, b3}, kFd);
  INFO(res.worst);
  CHECK(res.max_rel_error < kTol);
  // No biases; x both the input and the residual (its gradient accumulates through both).
  const SwiGluWeights nb{w1, nullptr, w2, nullptr, w3, nullptr};
  auto res2 = grad_check(
      [&](Tape& t) { return weighted_loss(t, add(t, x, swiglu(t, x, nb)), r); }, {x, w1, w2, w3}, kFd);
  INFO(res2.worst);
  CHECK(res2.max_rel_error < kTol);
  Tape tape;
  CHECK_THROWS_AS(swiglu(tape, x, {w1, b1, w2, b2, w1, b3}), ShapeError);  // w3 [10, 6]
}

TEST_CASE("silu_gate kernels: values by hand, bf16 outputs and fused column sums bit for bit") {
  // By hand: silu(x) = x / (1 + e^-x); silu'(x) = σ(x)(1 + x(1 − σ(x))). Large |x| stays finite.
  const float av[] = {-100.0f, -2.0f, 0.0f, 0.5f, 3.0f, 100.0f}, bv[] = {1, 2, 3, -1, 0.5f, 1};
  float y[6], da[6], db[6], bias_a[6] = {}, bias_b[6] = {};
  const float dy[] = {1, 1, 1, 1, 1, 1};
  silu_gate_forward(av, bv, y, 6);
  // One row of 6 columns: the column sums are the values themselves.
  silu_gate_backward_rows(av, bv, dy, 1, 6, {.da = da, .db = db, .bias_a = bias_a, .bias_b = bias_b});
  for (int i = 0; i < 6; ++i) {
    const double x = av[i], s = 1.0 / (1.0 + std::exp(-x));
    CHECK(y[i] == doctest::Approx(x * s * bv[i]).epsilon(1e-6));
    CHECK(db[i] == doctest::Approx(x * s).epsilon(1e-6));
    CHECK(da[i] == doctest::Approx(bv[i] * s * (1 + x * (1 - s))).epsilon(1e-6).scale(1e-30));
    CHECK(bias_a[i] == da[i]);
    CHECK(bias_b[i] == db[i]);
  }
  // [300, 257]: parallel spans and a last column block of 1; the bf16 outputs are the f32 ones
  // rounded, and the fused sums equal add_column_sums of the f32 outputs, added to what was there.
  Rng rng(13);
  const int64_t rows = 300, cols = 257, n = rows * cols;
  const Tensor a = randn({rows, cols}, rng, 4.0), b = randn({rows, cols}, rng),
               g = randn({rows, cols}, rng);
  Tensor y32 = Tensor::empty({rows, cols}), da32 = Tensor::empty({rows, cols}),
         db32 = Tensor::empty({rows, cols});
  std::vector<uint16_t> y16(n), da16(n), db16(n);
  std::vector<float> sa(cols, 0.5f), sb(cols, -0.25f), want_a = sa, want_b = sb;
  silu_gate_forward(a.data(), b.data(), y32.data(), n);
  silu_gate_forward_bf16(a.data(), b.data(), y16.data(), n);
  silu_gate_backward_rows(a.data(), b.data(), g.data(), rows, cols, {.da = da32.data(), .db = db32.data()});
  silu_gate_backward_rows(a.data(), b.data(), g.data(), rows, cols,
                          {.da16 = da16.data(), .db16 = db16.data(), .bias_a = sa.data(), .bias_b = sb.data()});
  add_column_sums(da32.data(), rows, cols, want_a.data());
  add_column_sums(db32.data(), rows, cols, want_b.data());
  int64_t wrong = 0;
  for (int64_t i = 0; i < n; ++i)
    wrong += y16[i] != to_bf16_bits(y32.data()[i]) || da16[i] != to_bf16_bits(da32.data()[i]) ||
             db16[i] != to_bf16_bits(db32.data()[i]);
  CHECK(wrong == 0);
  CHECK(sa == want_a);
  CHECK(sb == want_b);
}

TEST_CASE("swiglu: the values and gradients of linear, silu, mul and linear") {
  // Against the unfused ops (oneDNN's swish for silu) on enough entries for parallel spans: one
  // backward each through the same weighted loss.
  Rng rng(14);
  const Tensor x0 = randn({3, 100, 24}, rng);
  std::vector<Var> p = {param({257, 24}, rng, 0.5), param({257}, rng), param({257, 24}, rng, 0.5),
                        param({257}, rng), param({24, 257}, rng, 0.2), param({24}, rng)};
  const Tensor r = randn({3, 100, 24}, rng);
  auto run = [&](bool fused) {
    Var x = make_var(x0.clone(), true);
    for (Var& v : p) v->grad() = Tensor();
    Tape tape;
    Var y = fused ? swiglu(tape, x, {p[0], p[1], p[2], p[3], p[4], p[5]})
                  : linear(tape,
                           mul(tape, eltwise(tape, linear(tape, x, p[0], p[1]), Eltwise::Silu),
                               linear(tape, x, p[2], p[3])),
                           p[4], p[5]);
    tape.backward(weighted_loss(tape, y, r).var);
    std::vector<Tensor> out = {y->value.clone(), x->grad()};
    for (Var& v : p) out.push_back(v->grad());
    return out;
  };
  const std::vector<Tensor> fused = run(true), unfused = run(false);
  // Relative to each output's largest entry: silu' crosses zero near a = −1.28, where σ and
  // a·σ(1 − σ) cancel and either rounding is large against the entry itself.
  for (size_t k = 0; k < fused.size(); ++k) {
    double worst = 0, scale = 0;
    for (int64_t i = 0; i < fused[k].numel(); ++i) {
      const double want = unfused[k].data()[i];
      worst = std::max(worst, std::abs(fused[k].data()[i] - want));
      scale = std::max(scale, std::abs(want));
    }
    INFO("output " << k << " (y, dx, dw1, db1, dw2, db2, dw3, db3): " << worst << " of " << scale);
    CHECK(worst < 1e-5 * scale);
  }
}

TEST_CASE("swiglu: frozen inputs get no gradient and change none of the others, f32 and bf16") {
  // Each case freezes some of x, the weights and the biases; the trainable ones must get the bits
  // of the run where everything trains (their products and sums do not depend on the others), the
  // frozen ones no gradient at all.
  Rng rng(15);
  const Tensor x0 = randn({2, 40, 16}, rng), r = randn({2, 40, 16}, rng);
  std::vector<Tensor> p0 = {randn({70, 16}, rng), randn({70}, rng), randn({70, 16}, rng),
                            randn({70}, rng), randn({16, 70}, rng), randn({16}, rng)};
  auto run = [&](bool bf16, const std::vector<bool>& trains) {  // trains: x, w1, b1, ..., b3
    Var x = make_var(x0.clone(), trains[0]);
    std::vector<Var> p;
    for (size_t i = 0; i < p0.size(); ++i) p.push_back(make_var(p0[i].clone(), trains[i + 1]));
    Tape tape;
    tape.set_bf16(bf16);
    tape.backward(weighted_loss(tape, swiglu(tape, x, {p[0], p[1], p[2], p[3], p[4], p[5]}), r).var);
    std::vector<Var> all = {x};
    all.insert(all.end(), p.begin(), p.end());
    return all;
  };
  const std::vector<std::vector<bool>> cases = {
      {false, true, true, true, true, true, true},    // x without a gradient
      {true, false, true, false, true, true, true},   // W1 and W2 frozen
      {true, true, false, true, false, true, false},  // the biases frozen
      {false, false, true, true, true, false, true},  // only b1, W2, b2 and b3 train
      {false, false, false, false, false, true, true}};  // only the W3 linear trains
  for (bool bf16 : {false, true}) {
    const std::vector<Var> full = run(bf16, std::vector<bool>(7, true));
    for (const auto& trains : cases) {
      const std::vector<Var> got = run(bf16, trains);
      for (size_t i = 0; i < got.size(); ++i) {
        CAPTURE(bf16);
        CAPTURE(i);  // 0 x, 1 w1, 2 b1, 3 w2, 4 b2, 5 w3, 6 b3
        REQUIRE(got[i]->has_grad() == bool(trains[i]));
        if (!trains[i]) continue;
        const Tensor &g = got[i]->grad(), &want = full[i]->grad();
        CHECK(std::equal(g.data(), g.data() + g.numel(), want.data()));
      }
    }
  }
  Tape tape;
  Var x = make_var(x0.clone(), true);
  CHECK_THROWS_AS(swiglu(tape, x, {nullptr, nullptr, make_var(p0[2].clone(), true), nullptr,
                                   make_var(p0[4].clone(), true), nullptr}),
                  ShapeError);
}

TEST_CASE("grad: srmsnorm and rmsnorm") {
  Rng rng(3);
  Var x = param({5, 8}, rng), w = param({8}, rng);
  Tensor r = randn({5, 8}, rng);
  auto res =
      grad_check([&](Tape& t) { return weighted_loss(t, rms_norm(t, x, nullptr), r); }, {x}, kFd);
  INFO(res.worst);
  CHECK(res.max_rel_error < kTol);
  auto res2 =
      grad_check([&](Tape& t) { return weighted_loss(t, rms_norm(t, x, w), r); }, {x, w}, kFd);
  INFO(res2.worst);
  CHECK(res2.max_rel_error < kTol);
}

TEST_CASE("srmsnorm value: x / (‖x‖/√d + 1e-8)") {
  Tape tape;
  Var x = make_var(Tensor::from({1, 4}, {1, 2, 3, 4}));
  Var y = rms_norm(tape, x, nullptr);
  const double rms = std::sqrt((1 + 4 + 9 + 16) / 4.0);
  CHECK(y->value.data()[3] == doctest::Approx(4 / (rms + 1e-8)));
}

TEST_CASE("grad: add, mul, scale, dropout") {
  Rng rng(4);
  Var a = param({6, 5}, rng), b = param({6, 5}, rng);
  Tensor r = randn({6, 5}, rng);
  auto res = grad_check(
      [&](Tape& t) { return weighted_loss(t, scale(t, mul(t, add(t, a, b), b), 0.7f), r); }, {a, b},
      kFd);
  INFO(res.worst);
  CHECK(res.max_rel_error < kTol);
  // Dropout: the same key must be reused for every evaluation, so fix the rng per call.
  auto res2 = grad_check(
      [&](Tape& t) {
        Rng fixed(9);
        return weighted_loss(t, dropout(t, a, 0.3f, true, fixed), r);
      },
      {a}, kFd);
  INFO(res2.worst);
  CHECK(res2.max_rel_error < kTol);
}

TEST_CASE("grad: add_dropout, and its values against add(base, dropout(x))") {
  Rng rng(14);
  // 40,000 entries: more than one thread's span, so the regenerated mask is checked across a split.
  Var base = param({200, 200}, rng), x = param({200, 200}, rng);
  Tensor r = randn({200, 200}, rng);
  Var small_base = param({6, 5}, rng), small_x = param({6, 5}, rng);
  Tensor small_r = randn({6, 5}, rng);
  auto res = grad_check(
      [&](Tape& t) {
        Rng fixed(9);
        return weighted_loss(t, add_dropout(t, small_base, small_x, 0.3f, true, fixed), small_r);
      },
      {small_base, small_x}, kFd);
  INFO(res.worst);
  CHECK(res.max_rel_error < kTol);

  // The fused op against the two-op composition, same key: values within one rounding of an FMA,
  // gradients equal bit for bit (dx = dy, dh = dy · m exactly in both).
  std::vector<float> fused_y, fused_db, fused_dx, plain_y, plain_db, plain_dx;
  for (bool fused : {true, false}) {
    base->grad() = Tensor();
    x->grad() = Tensor();
    Tape t;
    Rng fixed(21);
    Var y = fused ? add_dropout(t, base, x, 0.25f, true, fixed) : add(t, base, dropout(t, x, 0.25f, true, fixed));
    (fused ? fused_y : plain_y) = y->value.to_vector();
    Var loss = weighted_loss(t, y, r).var;
    y.reset();
    t.backward(loss);
    (fused ? fused_db : plain_db) = base->grad().to_vector();
    (fused ? fused_dx : plain_dx) = x->grad().to_vector();
  }
  int64_t dropped = 0;
  for (size_t i = 0; i < fused_y.size(); ++i) {
    CHECK(std::abs(fused_y[i] - plain_y[i]) <= 1e-6f * (1.0f + std::abs(plain_y[i])));
    dropped += fused_dx[i] == 0.0f;
  }
  CHECK(fused_db == plain_db);
  CHECK(fused_dx == plain_dx);
  // About a quarter of the entries dropped (p = 0.25; 40,000 draws: sd 0.2 %).
  CHECK(std::abs(static_cast<double>(dropped) / fused_dx.size() - 0.25) < 0.01);
  // Evaluation: a plain sum.
  Tape t;
  Rng any(1);
  CHECK(add_dropout(t, base, x, 0.25f, false, any)->value.to_vector() == add(t, base, x)->value.to_vector());
}

TEST_CASE("add hands its gradient on without a copy only when no one else can read it") {
  Rng rng(15);
  Var a = param({4, 3}, rng), b = param({4, 3}, rng);
  Tensor r = randn({4, 3}, rng);
  // a is used before y = a + b, so its gradient grows after add's backward; y is held by the
  // caller, so add must copy rather than give a the buffer of y's gradient.
  Tape t;
  Var twice = scale(t, a, 2.0f);
  Var y = add(t, a, b);
  Var loss = weighted_loss(t, add(t, y, twice), r).var;
  twice.reset();
  t.backward(loss);
  // y's gradient is r (the weights), whatever a received later; a's is r + 2r, b's r.
  const std::vector<float> rv = r.to_vector();
  for (int64_t i = 0; i < 12; ++i) {
    CHECK(y->grad().data()[i] == rv[i]);
    CHECK(a->grad().data()[i] == doctest::Approx(3.0 * rv[i]));
    CHECK(b->grad().data()[i] == rv[i]);
  }
}

TEST_CASE("dropout keeps about 1-p of the entries, scaled by 1/(1-p)") {
  Rng rng(5);
  Tape tape;
  Var x = make_var(Tensor::full({100000}, 1.0f));
  Var y = dropout(tape, x, 0.25f, true, rng);
  int64_t kept = 0;
  for (int64_t i = 0; i < 100000; ++i) {
    const float v = y->value.data()[i];
    CHECK((v == 0.0f || std::abs(v - 1.0f / 0.75f) < 1e-6));
    kept += v != 0.0f;
  }
  CHECK(std::abs(kept / 100000.0 - 0.75) < 0.01);
  CHECK(dropout(tape, x, 0.25f, false, rng) == x);
}

TEST_CASE("grad: embedding with positions") {
  Rng rng(6);
  Var table = param({11, 4}, rng), pos = param({5, 4}, rng);
  std::vector<int32_t> ids = {1, 3, 3, 0, 10, 2, 3, 1};  // repeated ids accumulate
  Tensor r = randn({2, 4, 4}, rng);
  auto res = grad_check(
      [&](Tape& t) {
        return weighted_loss(t, add_positions(t, embedding(t, table, ids, 2, 4, 2.0f), pos), r);
      },
      {table, pos}, kFd);
  INFO(res.worst);
  CHECK(res.max_rel_error < kTol);
  Tape t;
  CHECK_THROWS(embedding(t, table, {11}, 1, 1, 1.0f));
}

TEST_CASE("lm_head_cross_entropy: value by hand, gradient by finite differences, chunking") {
  // Hand check: 1 row, weight rows e0, e1 → logits (h·e0, h·e1).
  Tape tape;
  Var h = make_var(Tensor::from({1, 2}, {1.0f, 2.0f}), true);
  Var w = make_var(Tensor::from({2, 2}, {1.0f, 0.0f, 0.0f, 1.0f}), true);
  LmLoss l = lm_head_cross_entropy(tape, h, w, {0});
  CHECK(l.loss->value.data()[0] == doctest::Approx(std::log(std::exp(1.0) + std::exp(2.0)) - 1.0));

  Rng rng(7);
  Var hidden = param({7, 6}, rng), weight = param({13, 6}, rng);
  std::vector<int32_t> targets = {3, kIgnoreIndex, 0, 12, 5, 5, kIgnoreIndex};
  for (int64_t chunk : {1, 3, 512}) {
    auto res = grad_check(
        [&](Tape& t) { return precise(lm_head_cross_entropy(t, hidden, weight, targets, chunk)); },
        {hidden, weight}, kFd);
    INFO("chunk " << chunk << ": " << res.worst);
    CHECK(res.max_rel_error < kTol);
  }
  Var bias = param({13}, rng);
  auto res_bias = grad_check(
      [&](Tape& t) { return precise(lm_head_cross_entropy(t, hidden, weight, targets, 3, bias)); },
      {hidden, weight, bias}, kFd);
  INFO("with bias: " << res_bias.worst);
  CHECK(res_bias.max_rel_error < kTol);
  Tape t2;
  LmLoss a = lm_head_cross_entropy(t2, hidden, weight, targets, 2);
  LmLoss b = lm_head_cross_entropy(t2, hidden, weight, targets, 7);
  CHECK(a.n_targets == 5);
  CHECK(a.sum_nll == doctest::Approx(b.sum_nll).epsilon(1e-6));
}

TEST_CASE("grad: layernorm") {
  Rng rng(8);
  Var x = param({5, 8}, rng), w = param({8}, rng), b = param({8}, rng);
  Tensor r = randn({5, 8}, rng);
  auto res = grad_check([&](Tape& t) { return weighted_loss(t, layer_norm(t, x, w, b), r); },
                        {x, w, b}, kFd);
  INFO(res.worst);
  CHECK(res.max_rel_error < kTol);
}

TEST_CASE("grad: classification cross-entropy and sequence pooling with padding") {
  Rng rng(12);
  Var logits = param({4, 3}, rng);
  std::vector<int32_t> labels = {2, 0, kIgnoreIndex, 1};
  auto res =
      grad_check([&](Tape& t) { return precise(cross_entropy(t, logits, labels)); }, {logits}, kFd);
  INFO(res.worst);
  CHECK(res.max_rel_error < kTol);
  Tape t0;
  Var two = make_var(Tensor::from({1, 2}, {0.0f, std::log(3.0f)}));
  CHECK(cross_entropy(t0, two, {1}).loss->value.data()[0] == doctest::Approx(std::log(4.0 / 3.0)));

  Var x = param({2, 3, 4}, rng);
  std::vector<uint8_t> valid = {1, 1, 0, 1, 1, 1};
  Tensor r = randn({2, 4}, rng);
  for (PoolKind kind : {PoolKind::Mean, PoolKind::First, PoolKind::Last}) {
    auto rp = grad_check(
        [&](Tape& t) { return weighted_loss(t, sequence_pool(t, x, kind, &valid), r); }, {x}, kFd);
    INFO(rp.worst);
    CHECK(rp.max_rel_error < kTol);
  }
  // Mean over real positions only; Last is the last real position.
  Tape t1;
  Var mean = sequence_pool(t1, x, PoolKind::Mean, &valid);
  CHECK(mean->value.data()[0] == doctest::Approx((x->value.data()[0] + x->value.data()[4]) / 2));
  Var last = sequence_pool(t1, x, PoolKind::Last, &valid);
  CHECK(last->value.data()[1] == doctest::Approx(x->value.data()[4 + 1]));
}

TEST_CASE("lm_head_cross_entropy: the upstream gradient scales d hidden and d weight, first or accumulated") {
  Rng rng(29);
  Var hidden = param({6, 5}, rng), weight = param({11, 5}, rng);
  const std::vector<int32_t> targets = {1, 4, kIgnoreIndex, 10, 0, 7};
  auto grads = [&](float seed, bool preexisting) {
    hidden->grad() = Tensor();
    weight->grad() = preexisting ? Tensor::full({11, 5}, 1.0f) : Tensor();
    Tape tape;
    LmLoss l = lm_head_cross_entropy(tape, hidden, weight, targets, 4);
    tape.backward(l.loss, seed);
    return std::make_pair(hidden->grad().to_vector(), weight->grad().to_vector());
  };
  const auto [h1, w1] = grads(1.0f, false);
  const auto [hq, wq] = grads(0.25f, false);
  const auto [hp, wp] = grads(0.25f, true);
  for (size_t i = 0; i < h1.size(); ++i) CHECK(hq[i] == doctest::Approx(0.25 * h1[i]));
  for (size_t i = 0; i < w1.size(); ++i) {
    CHECK(wq[i] == doctest::Approx(0.25 * w1[i]));
    CHECK(wp[i] == doctest::Approx(1.0 + 0.25 * w1[i]));
  }
}

namespace {
/// y = x, whose backward hands factor·dy on to x: a gradient formula off by (factor − 1).
Var wrong_gradient(Tape& tape, const Var& x, float factor) {
  Var y = make_var(x->value.clone());
  if (!tape.needs_grad({&x})) return y;
  y->requires_grad = true;
  tape.record([x, y, factor]() {
    if (!y->has_grad()) return;
    float* dx = x->grad_buf().data();
    const float* dy = y->grad().data();
    for (int64_t i = 0; i < y->grad().numel(); ++i) dx[i] += factor * dy[i];
  });
  return y;
}
}  // namespace

TEST_CASE("grad_check with kFd and kTol rejects a gradient that is 1 % wrong, accepts it exact") {
  Rng rng(31);
  Var x = param({3, 4, 5}, rng), w = param({6, 5}, rng), b = param({6}, rng);
  Tensor r = randn({3, 4, 6}, rng);
  Var hidden = param({7, 6}, rng), weight = param({13, 6}, rng);
  const std::vector<int32_t> targets = {3, kIgnoreIndex, 0, 12, 5, 5, kIgnoreIndex};
  for (float factor : {1.0f, 1.01f, 0.99f}) {
    INFO("factor " << factor);
    auto lin = grad_check(
        [&](Tape& t) { return weighted_loss(t, wrong_gradient(t, linear(t, x, w, b), factor), r); },
        {x, w, b}, kFd);
    auto head = grad_check(
        [&](Tape& t) {
          return precise(
              lm_head_cross_entropy(t, wrong_gradient(t, hidden, factor), weight, targets));
        },
        {hidden}, kFd);
    INFO(lin.worst << "; " << head.worst);
    if (factor == 1.0f) {
      CHECK(lin.max_rel_error < kTol);
      CHECK(head.max_rel_error < kTol);
    } else {
      CHECK(lin.max_rel_error > kTol);
      CHECK(head.max_rel_error > kTol);
    }
  }
}

TEST_CASE("grad: gather_rows, with a repeated row") {
  Rng rng(31);
  Var x = param({2, 3, 5}, rng);  // 6 rows of width 5
  const std::vector<int64_t> rows = {4, 0, 4, 5};
  Tensor r = randn({4, 5}, rng);
  auto res = grad_check([&](Tape& t) { return weighted_loss(t, gather_rows(t, x, rows), r); }, {x}, kFd);
  INFO(res.worst);
  CHECK(res.max_rel_error < kTol);
  // By hand: row 4's gradient is the sum of the weights of output rows 0 and 2; rows 1-3 get none.
  x->grad() = Tensor();  // drop what grad_check left
  Tape tape;
  Var y = gather_rows(tape, x, rows);
  CHECK(y->value.data()[2 * 5 + 3] == x->value.data()[4 * 5 + 3]);
  Var loss = weighted_sum(tape, y, r);
  tape.backward(loss);
  CHECK(x->grad().data()[4 * 5 + 1] == doctest::Approx(r.data()[0 * 5 + 1] + r.data()[2 * 5 + 1]));
  CHECK(x->grad().data()[2 * 5 + 1] == 0.0f);
  CHECK_THROWS_AS(gather_rows(tape, x, {6}), ShapeError);
}

TEST_CASE("grad: mse_loss") {
  Rng rng(32);
  Var p = param({5, 1}, rng);
  const std::vector<float> t = {0.5f, -1.0f, 2.0f, 0.0f, 3.5f};
  auto res = grad_check([&](Tape& tape) { return precise(mse_loss(tape, p, t)); }, {p}, kFd);
  INFO(res.worst);
  CHECK(res.max_rel_error < kTol);
  // By hand: predictions (1, 2) against (0, 0): (1 + 4) / 2 = 2.5, d/dp = 2 (p − t) / 2 = (1, 2).
  Var q = make_var(Tensor::empty({2}), true);
  q->value.data()[0] = 1.0f;
  q->value.data()[1] = 2.0f;
  Tape tape;
  LmLoss l = mse_loss(tape, q, {0.0f, 0.0f});
  CHECK(l.loss->value.data()[0] == doctest::Approx(2.5));
  tape.backward(l.loss);
  CHECK(q->grad().data()[0] == doctest::Approx(1.0));
  CHECK(q->grad().data()[1] == doctest::Approx(2.0));
  CHECK_THROWS_AS(mse_loss(tape, q, {0.0f}), ShapeError);
}
