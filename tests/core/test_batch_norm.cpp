// BatchNorm over the feature axis (core/runtime/ops/batch_norm.h; the LRA "synbatch"; PyTorch BatchNorm1d).
// Hand-worked values, running-stat update, oneDNN against the float64 naive reference at awkward
// widths, finite-difference gradients (training and eval), padding invariance, and errors.
//
// Tolerances:
//   kHand      1e-5  absolute, hand-worked values (f32 output, eps = 1e-5 included in the numbers)
//   kNaive     2e-5  max |oneDNN − naive| / (1 + |naive|), forward and backward
//   kNaiveLarge 1e-4 the same over 3000 rows (f32 sums inside oneDNN); ×30 for dweight/dbias sums
//   kGradTol   2e-3  max relative error of kFd: the loss in double, Richardson-extrapolated central
//                    differences over 3e-2 (test_ops_grad.cpp; the worst here is 3.5e-4)
//   kPad       0     padded batch vs the real rows alone: same primitive on the same block, so
//   bitwise
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "core/runtime/autograd/grad_check.h"
#include "core/error.h"
#include "core/runtime/ops/batch_norm.h"
#include "core/runtime/rng.h"
#include "tests/core/twin_ranks.h"

using namespace tn;

namespace {
constexpr double kHand = 1e-5;
constexpr double kNaive = 2e-5;
constexpr double kNaiveLarge = 1e-4;
const GradCheckOptions kFd{.eps = 3e-2, .richardson = true};
constexpr double kGradTol = 2e-3;
constexpr double kPad = 0.0;

Tensor randn(const Shape& shape, Rng& rng, double scale = 1.0, double offset = 0.0) {
  Tensor t = Tensor::empty(shape);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data()[i] = static_cast<float>(offset + rng.normal() * scale);
  return t;
}
Var param(const Shape& shape, Rng& rng, double scale = 1.0, double offset = 0.0) {
  return make_var(randn(shape, rng, scale, offset), true);
}

// max |a − b| / (1 + |b|) over all entries.
double max_err(const Tensor& a, const Tensor& b) {
  REQUIRE(a.numel() == b.numel());
  double e = 0.0;
  for (int64_t i = 0; i < a.numel(); ++i)
    e = std::max(e, std::abs(static_cast<double>(a.data()[i]) - b.data()[i]) /
                        (1.0 + std::abs(static_cast<double>(b.data()[i]))));
  return e;
}
double max_abs_diff(const float* a, const float* b, int64_t n) {
  double e = 0.0;
  for (int64_t i = 0; i < n; ++i) e = std::max(e, std::abs(static_cast<double>(a[i]) - b[i]));
  return e;
}

// x [2, 2, 2]: feature 0 takes 1, 2, 3, 4 (mean 2.5, biased var 1.25, unbiased 5/3);
// feature 1 takes 0, 0, 2, −2 (mean 0, biased var 2, unbiased 8/3). weight [2, 0.5], bias [1, −1].
Var hand_x() { return make_var(Tensor::from({2, 2, 2}, {1, 0, 2, 0, 3, 2, 4, -2}), true); }
Var hand_w() { return make_var(Tensor::from({2}, {2.0f, 0.5f}), true); }
Var hand_b() { return make_var(Tensor::from({2}, {1.0f, -1.0f}), true); }

std::vector<uint8_t> random_mask(int64_t rows, Rng& rng, double p_pad) {
  std::vector<uint8_t> mask(rows);
  for (auto& m : mask) m = rng.uniform() < p_pad ? 0 : 1;
  mask[0] = 1;  // at least 2 real rows
  mask[rows - 1] = 1;
  return mask;
}
}  // namespace

TEST_CASE("batch_norm training: hand-worked values and the running-stat update") {
  Tape tape;
  BatchNormState state = batch_norm_state(2);
  Var y = batch_norm(tape, hand_x(), hand_w(), hand_b(), state, true, nullptr);
  // y = (x − mean)/√(var + 1e-5)·w + b, column by column.
  const std::vector<float> expect = {-1.6832708f, -1.0f,        0.1055764f, -1.0f,
                                     1.8944236f,  -0.2928950f, 3.6832708f, -1.7071050f};
  for (size_t i = 0; i < expect.size(); ++i) {
    INFO("entry " << i);
    CHECK(std::abs(y->value.data()[i] - expect[i]) < kHand);
  }
  // running = 0.9·running + 0.1·batch stat, with the unbiased variance.
  CHECK(state.running_mean.data()[0] == doctest::Approx(0.25));
  CHECK(std::abs(state.running_mean.data()[1]) < 1e-7);
  CHECK(state.running_var.data()[0] == doctest::Approx(0.9 + 0.1 * 5.0 / 3.0));
  CHECK(state.running_var.data()[1] == doctest::Approx(0.9 + 0.1 * 8.0 / 3.0));
  // A second step compounds: mean 0.9·0.25 + 0.1·2.5, var 0.9·(1.0666…) + 0.1·(5/3).
  batch_norm(tape, hand_x(), hand_w(), hand_b(), state, true, nullptr);
  CHECK(state.running_mean.data()[0] == doctest::Approx(0.9 * 0.25 + 0.1 * 2.5));
  CHECK(state.running_var.data()[0] ==
        doctest::Approx(0.9 * (0.9 + 0.1 * 5.0 / 3.0) + 0.1 * 5.0 / 3.0));
  // momentum is honoured.
  BatchNormState fast = batch_norm_state(2, /*momentum=*/0.5);
  batch_norm(tape, hand_x(), nullptr, nullptr, fast, true, nullptr);
  CHECK(fast.running_mean.data()[0] == doctest::Approx(1.25));
  CHECK(fast.running_var.data()[1] == doctest::Approx(0.5 + 0.5 * 8.0 / 3.0));
}

TEST_CASE("batch_norm eval: hand-worked values from the running stats, state untouched") {
  Tape tape;
  BatchNormState state = batch_norm_state(2);
  state.running_mean = Tensor::from({2}, {1.0f, -1.0f});
  state.running_var = Tensor::from({2}, {4.0f, 1.0f});
  Var y = batch_norm(tape, hand_x(), hand_w(), hand_b(), state, false, nullptr);
  const std::vector<float> expect = {1.0f,       -0.5000025f, 1.9999988f, -0.5000025f,
                                     2.9999975f, 0.4999925f,  3.9999963f, -1.4999975f};
  for (size_t i = 0; i < expect.size(); ++i) {
    INFO("entry " << i);
    CHECK(std::abs(y->value.data()[i] - expect[i]) < kHand);
  }
  CHECK(state.running_mean.to_vector() == std::vector<float>{1.0f, -1.0f});
  CHECK(state.running_var.to_vector() == std::vector<float>{4.0f, 1.0f});
}

TEST_CASE("batch_norm matches the naive reference (forward, backward) at awkward widths") {
  for (int64_t d : {1, 7, 16, 17, 33}) {
    for (bool masked : {false, true}) {
      for (bool training : {true, false}) {
        Rng rng(100 + d);
        const int64_t batch = 3, seq_len = 5;
        // An offset of 3 checks the variance is not taken as E[x²] − E[x]² in a lossy way.
        Var x = param({batch, seq_len, d}, rng, 1.5, 3.0);
        Var w = param({d}, rng), b = param({d}, rng);
        std::vector<uint8_t> mask = random_mask(batch * seq_len, rng, 0.3);
        const std::vector<uint8_t>* rv = masked ? &mask : nullptr;
        BatchNormState state = batch_norm_state(d);
        state.running_mean = randn({d}, rng);
        state.running_var = randn({d}, rng, 0.2, 1.0);
        const BatchNormState before{state.running_mean.clone(), state.running_var.clone(),
                                    state.momentum, state.eps};

        Tensor want_mean, want_var;
        Tensor want_y = batch_norm_forward_naive(x->value, &w->value, &b->value, before, training,
                                                 rv, &want_mean, &want_var);
        Tape tape;
        Var y = batch_norm(tape, x, w, b, state, training, rv);
        INFO("d " << d << " masked " << masked << " training " << training);
        CHECK(max_err(y->value, want_y) < kNaive);
        if (training) {  // state = 0.9·before + 0.1·(batch mean, unbiased batch var)
          int64_t n_real = 0;
          for (int64_t i = 0; i < batch * seq_len; ++i) n_real += !rv || mask[i];
          for (int64_t j = 0; j < d; ++j) {
            CHECK(state.running_mean.data()[j] ==
                  doctest::Approx(0.9 * before.running_mean.data()[j] + 0.1 * want_mean.data()[j])
                      .epsilon(1e-5));
            CHECK(state.running_var.data()[j] ==
                  doctest::Approx(0.9 * before.running_var.data()[j] +
                                  0.1 * want_var.data()[j] * n_real / (n_real - 1.0))
                      .epsilon(1e-5));
          }
        }

        Tensor dy = randn(x->value.shape(), rng);
        Var loss = weighted_sum(tape, y, dy);
        tape.backward(loss);
        BatchNormGrads want = batch_norm_backward_naive(x->value, dy, &w->value, before, training, rv);
        CHECK(max_err(x->grad(), want.dx) < kNaive);
        CHECK(max_err(w->grad(), want.dweight) < kNaive);
        CHECK(max_err(b->grad(), want.dbias) < kNaive);
      }
    }
  }
}

TEST_CASE("batch_norm matches the naive reference at an LRA-like width and many rows") {
  // d = 128 as in LRA, 4·1000 rows: the JIT kernel's blocked f32 reductions, not just its tails.
  Rng rng(11);
  const int64_t batch = 4, seq_len = 1000, d = 128;
  Var x = param({batch, seq_len, d}, rng, 1.5, 3.0);
  Var w = param({d}, rng), b = param({d}, rng);
  std::vector<uint8_t> mask = random_mask(batch * seq_len, rng, 0.25);
  for (bool training : {true, false}) {
    BatchNormState state = batch_norm_state(d);
    const BatchNormState before{state.running_mean.clone(), state.running_var.clone(),
                                state.momentum, state.eps};
    Tensor want_y = batch_norm_forward_naive(x->value, &w->value, &b->value, before, training, &mask);
    x->grad() = Tensor();
    w->grad() = Tensor();
    b->grad() = Tensor();
    Tape tape;
    Var y = batch_norm(tape, x, w, b, state, training, &mask);
    Tensor dy = randn(x->value.shape(), rng);
    tape.backward(weighted_sum(tape, y, dy));
    BatchNormGrads want = batch_norm_backward_naive(x->value, dy, &w->value, before, training, &mask);
    INFO("training " << training << ": y " << max_err(y->value, want_y) << " dx "
                     << max_err(x->grad(), want.dx) << " dw " << max_err(w->grad(), want.dweight)
                     << " db " << max_err(b->grad(), want.dbias));
    CHECK(max_err(y->value, want_y) < kNaiveLarge);
    CHECK(max_err(x->grad(), want.dx) < kNaiveLarge);
    // dweight and dbias are sums over ~3000 rows: compare relative to their size.
    CHECK(max_err(w->grad(), want.dweight) < kNaiveLarge * 30);
    CHECK(max_err(b->grad(), want.dbias) < kNaiveLarge * 30);
  }
}

TEST_CASE("grad: batch_norm training (x, weight, bias, with and without mask, null params)") {
  Rng rng(7);
  Var x = param({2, 3, 5}, rng), w = param({5}, rng), b = param({5}, rng);
  Tensor r = randn({2, 3, 5}, rng);
  BatchNormState state = batch_norm_state(5);  // updated on every call; training outputs ignore it
  std::vector<uint8_t> mask = {1, 1, 0, 1, 0, 1};
  for (const std::vector<uint8_t>* rv : {static_cast<const std::vector<uint8_t>*>(nullptr),
                                         static_cast<const std::vector<uint8_t>*>(&mask)}) {
    auto res = grad_check(
        [&](Tape& t) { return weighted_loss(t, batch_norm(t, x, w, b, state, true, rv), r); },
        {x, w, b}, kFd);
    INFO("masked " << (rv != nullptr) << ": " << res.worst);
    CHECK(res.max_rel_error < kGradTol);
    if (rv) {  // padded rows pass no gradient
      for (int64_t i = 0; i < 6; ++i)
        if (!mask[i])
          for (int64_t j = 0; j < 5; ++j) CHECK(x->grad().data()[i * 5 + j] == 0.0f);
    }
  }
  auto res = grad_check(
      [&](Tape& t) {
        return weighted_loss(t, batch_norm(t, x, nullptr, nullptr, state, true, nullptr), r);
      },
      {x}, kFd);
  INFO("no affine: " << res.worst);
  CHECK(res.max_rel_error < kGradTol);
  auto res2 = grad_check(
      [&](Tape& t) {
        return weighted_loss(t, batch_norm(t, x, w, nullptr, state, true, &mask), r);
      },
      {x, w}, kFd);
  INFO("weight only: " << res2.worst);
  CHECK(res2.max_rel_error < kGradTol);
}

TEST_CASE("grad: batch_norm eval (affine map of the running stats)") {
  Rng rng(8);
  Var x = param({2, 3, 5}, rng), w = param({5}, rng), b = param({5}, rng);
  Tensor r = randn({2, 3, 5}, rng);
  BatchNormState state = batch_norm_state(5);
  state.running_mean = randn({5}, rng);
  state.running_var = randn({5}, rng, 0.2, 1.0);
  std::vector<uint8_t> mask = {0, 1, 1, 1, 0, 1};
  for (const std::vector<uint8_t>* rv : {static_cast<const std::vector<uint8_t>*>(nullptr),
                                         static_cast<const std::vector<uint8_t>*>(&mask)}) {
    auto res = grad_check(
        [&](Tape& t) { return weighted_loss(t, batch_norm(t, x, w, b, state, false, rv), r); },
        {x, w, b}, kFd);
    INFO("masked " << (rv != nullptr) << ": " << res.worst);
    CHECK(res.max_rel_error < kGradTol);
  }
  // Exactly dy·w/√(running_var + eps) per entry, unmasked.
  x->grad() = Tensor();  // grad_check leaves its analytic gradient behind
  Tape tape;
  Var y = batch_norm(tape, x, w, b, state, false, nullptr);
  tape.backward(weighted_sum(tape, y, r));
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 5; ++j) {
      const double want = r.data()[i * 5 + j] * w->value.data()[j] /
                          std::sqrt(state.running_var.data()[j] + state.eps);
      CHECK(x->grad().data()[i * 5 + j] == doctest::Approx(want).epsilon(1e-5));
    }
}

TEST_CASE("batch_norm padding invariance: padded batch equals the real rows alone") {
  for (bool training : {true, false}) {
    Rng rng(9);
    const int64_t batch = 3, seq_len = 6, d = 19, rows = batch * seq_len;
    Var x = param({batch, seq_len, d}, rng, 2.0, -1.0);
    Var w = param({d}, rng), b = param({d}, rng);
    std::vector<uint8_t> mask = random_mask(rows, rng, 0.4);
    // The real rows alone, in order, as one sequence [1, N, d]; padded rows filled with garbage.
    std::vector<int64_t> real;
    for (int64_t i = 0; i < rows; ++i) {
      if (mask[i]) real.push_back(i);
      else
        for (int64_t j = 0; j < d; ++j) x->value.data()[i * d + j] = 1e6f * (j + 1);
    }
    const int64_t n_real = static_cast<int64_t>(real.size());
    Var x_alone = make_var(Tensor::empty({1, n_real, d}), true);
    for (int64_t k = 0; k < n_real; ++k)
      std::copy_n(x->value.data() + real[k] * d, d, x_alone->value.data() + k * d);
    Var w_alone = make_var(w->value.clone(), true), b_alone = make_var(b->value.clone(), true);

    BatchNormState state_pad = batch_norm_state(d), state_alone = batch_norm_state(d);
    if (!training) {
      state_pad.running_mean = randn({d}, rng);
      state_alone.running_mean = state_pad.running_mean.clone();
    }
    Tape tape_pad, tape_alone;
    Var y_pad = batch_norm(tape_pad, x, w, b, state_pad, training, &mask);
    Var y_alone = batch_norm(tape_alone, x_alone, w_alone, b_alone, state_alone, training, nullptr);
    Tensor dy_alone = randn({1, n_real, d}, rng);
    Tensor dy_pad = randn({batch, seq_len, d}, rng);  // padded rows' upstream gradient is ignored
    for (int64_t k = 0; k < n_real; ++k)
      std::copy_n(dy_alone.data() + k * d, d, dy_pad.data() + real[k] * d);
    tape_pad.backward(weighted_sum(tape_pad, y_pad, dy_pad));
    tape_alone.backward(weighted_sum(tape_alone, y_alone, dy_alone));

    INFO("training " << training << ", " << n_real << " of " << rows << " rows real");
    double y_diff = 0.0, dx_diff = 0.0;
    for (int64_t i = 0; i < rows; ++i) {
      const float* yp = y_pad->value.data() + i * d;
      const float* gp = x->grad().data() + i * d;
      auto it = std::find(real.begin(), real.end(), i);
      if (it == real.end()) {
        for (int64_t j = 0; j < d; ++j) {
          CHECK(yp[j] == 0.0f);
          CHECK(gp[j] == 0.0f);
        }
        continue;
      }
      const int64_t k = it - real.begin();
      y_diff = std::max(y_diff, max_abs_diff(yp, y_alone->value.data() + k * d, d));
      dx_diff = std::max(dx_diff, max_abs_diff(gp, x_alone->grad().data() + k * d, d));
    }
    CHECK(y_diff <= kPad);
    CHECK(dx_diff <= kPad);
    CHECK(max_abs_diff(w->grad().data(), w_alone->grad().data(), d) <= kPad);
    CHECK(max_abs_diff(b->grad().data(), b_alone->grad().data(), d) <= kPad);
    CHECK(max_abs_diff(state_pad.running_mean.data(), state_alone.running_mean.data(), d) <= kPad);
    CHECK(max_abs_diff(state_pad.running_var.data(), state_alone.running_var.data(), d) <= kPad);
  }
}

TEST_CASE("batch_norm errors: empty mask, a single real row, bad shapes") {
  Tape tape;
  BatchNormState state = batch_norm_state(2);
  Var x = hand_x();
  std::vector<uint8_t> none(4, 0), one = {0, 0, 1, 0}, short_mask(3, 1);
  CHECK_THROWS_WITH_AS(batch_norm(tape, x, nullptr, nullptr, state, true, &none),
                       doctest::Contains("as padding"), ShapeError);
  CHECK(state.running_mean.to_vector() == std::vector<float>{0.0f, 0.0f});  // no NaN written
  CHECK(state.running_var.to_vector() == std::vector<float>{1.0f, 1.0f});
  CHECK_THROWS_WITH_AS(batch_norm(tape, x, nullptr, nullptr, state, true, &one),
                       doctest::Contains("only 1 real row"), ShapeError);
  CHECK_THROWS_WITH_AS(batch_norm(tape, x, nullptr, nullptr, state, true, &short_mask),
                       doctest::Contains("row_valid has 3 entries"), ShapeError);
  Var bad_w = make_var(Tensor::full({3}, 1.0f), true);
  CHECK_THROWS_WITH_AS(batch_norm(tape, x, bad_w, nullptr, state, true, nullptr),
                       doctest::Contains("weight has shape [3]"), ShapeError);
  BatchNormState empty_state;
  CHECK_THROWS_AS(batch_norm(tape, x, nullptr, nullptr, empty_state, true, nullptr), ShapeError);
  CHECK_THROWS_AS(batch_norm(tape, make_var(Tensor::zeros({4}), true), nullptr, nullptr, state,
                             true, nullptr),
                  ShapeError);
  // Eval with everything padded is well defined: all zeros, no NaN; one real row is fine too.
  Var y = batch_norm(tape, x, nullptr, nullptr, state, false, &none);
  for (float v : y->value.to_vector()) CHECK(v == 0.0f);
  Var y1 = batch_norm(tape, x, nullptr, nullptr, state, false, &one);
  CHECK(std::isfinite(y1->value.data()[4]));
  tape.clear();
}

TEST_CASE("batch_norm synced across ranks (SyncBatchNorm): identical ranks give one rank's values, over their total rows") {
  // Two ranks holding the same rows: the combined statistics are this rank's, the running variance
  // is unbiased over 2N rows, and Σ dy, Σ dy·x̂ over 2N rows divided by 2N give the one-rank dx; the
  // parameters' gradients stay this rank's part. A slip between this rank's count and the total
  // would show as a factor of 2.
  for (bool masked : {false, true}) {
    Rng rng(7);
    const int64_t batch = 3, seq_len = 5, d = 17;
    Var x = param({batch, seq_len, d}, rng, 1.5, 3.0);
    Var w = param({d}, rng), b = param({d}, rng);
    std::vector<uint8_t> mask = random_mask(batch * seq_len, rng, 0.3);
    const std::vector<uint8_t>* rv = masked ? &mask : nullptr;
    BatchNormState state = batch_norm_state(d);
    const BatchNormState before{state.running_mean.clone(), state.running_var.clone(), state.momentum, state.eps};
    Tensor want_mean, want_var;
    const Tensor want_y = batch_norm_forward_naive(x->value, &w->value, &b->value, before, true, rv, &want_mean, &want_var);
    test::TwinRanks twins(2);
    Tape tape;
    Var y = batch_norm(tape, x, w, b, state, true, rv, &twins);
    INFO("masked " << masked);
    CHECK(max_err(y->value, want_y) < kNaive);
    int64_t n_real = 0;
    for (int64_t i = 0; i < batch * seq_len; ++i) n_real += !rv || mask[i];
    const double n_all = 2.0 * static_cast<double>(n_real);
    for (int64_t j = 0; j < d; ++j) {
      CHECK(state.running_mean.data()[j] == doctest::Approx(0.1 * want_mean.data()[j]).epsilon(1e-5));
      CHECK(state.running_var.data()[j] ==
            doctest::Approx(0.9 + 0.1 * want_var.data()[j] * n_all / (n_all - 1.0)).epsilon(1e-5));
    }
    Tensor dy = randn(x->value.shape(), rng);
    Var loss = weighted_sum(tape, y, dy);
    tape.backward(loss);
    const BatchNormGrads want = batch_norm_backward_naive(x->value, dy, &w->value, before, true, rv);
    CHECK(max_err(x->grad(), want.dx) < kNaive);
    CHECK(max_err(w->grad(), want.dweight) < kNaive);
    CHECK(max_err(b->grad(), want.dbias) < kNaive);
  }
}

TEST_CASE("batch_norm synced: a rank may hold a single real row, the total must reach 2") {
  Rng rng(8);
  const int64_t d = 4;
  Var x = param({1, 3, d}, rng);
  const std::vector<uint8_t> one_row{0, 1, 0};
  BatchNormState state = batch_norm_state(d);
  test::TwinRanks twins(2);
  Tape tape;
  Var y = batch_norm(tape, x, nullptr, nullptr, state, true, &one_row, &twins);  // 2 rows in all: fine
  // Two identical rows: mean = the row, variance 0; the real row normalises to 0, padding is 0.
  for (int64_t i = 0; i < 3 * d; ++i) CHECK(y->value.data()[i] == doctest::Approx(0.0).epsilon(1e-6));
  test::TwinRanks alone(1);
  CHECK_THROWS_AS(batch_norm(tape, x, nullptr, nullptr, state, true, &one_row, &alone), ShapeError);
}
