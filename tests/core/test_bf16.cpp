// bf16 products: rounding, pre-converted operands (transposed A read in place), the tape's shared
// copies, and the linear op and LM head in bf16 against f32 computations on rounded operands.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <iterator>
#include <limits>
#include <random>
#include <vector>

#include "core/runtime/autograd/grad_check.h"
#include "core/runtime/dnnl/bf16.h"
#include "core/runtime/dnnl/engine.h"
#include "core/runtime/dnnl/matmul.h"
#include "core/runtime/ops/elementwise.h"
#include "core/runtime/ops/eltwise.h"
#include "core/runtime/ops/linear.h"
#include "core/runtime/ops/lm_head_loss.h"
#include "core/runtime/ops/rms_norm.h"
#include "core/runtime/ops/swiglu.h"
#include "core/runtime/optim/adamw.h"
#include "core/runtime/rng.h"
#include "tests/rel_l2.h"

using namespace tn;

namespace {
std::vector<float> randn(size_t n, std::mt19937& gen, float scale = 1.f) {
  std::normal_distribution<float> normal(0.f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(gen);
  return v;
}
std::vector<float> rounded(const std::vector<float>& v) {
  std::vector<float> r(v.size());
  for (size_t i = 0; i < v.size(); ++i) r[i] = from_bf16_bits(to_bf16_bits(v[i]));
  return r;
}
std::vector<uint16_t> bits(const std::vector<float>& v) {
  std::vector<uint16_t> b(v.size());
  for (size_t i = 0; i < v.size(); ++i) b[i] = to_bf16_bits(v[i]);
  return b;
}
using tn::test::rel_l2;
}  // namespace

TEST_CASE("to_bf16_bits: round to nearest even, by hand, and bit-identical to oneDNN's reorder") {
  CHECK(to_bf16_bits(1.0f) == 0x3F80);
  CHECK(to_bf16_bits(-3.0f) == 0xC040);
  // 1 + 2^-8 lies halfway between 1 (0x3F80, even) and 1 + 2^-7 (0x3F81): ties go to even.
  CHECK(to_bf16_bits(1.0f + std::ldexp(1.0f, -8)) == 0x3F80);
  // 1 + 3·2^-8 lies halfway between 0x3F81 (odd) and 0x3F82 (even).
  CHECK(to_bf16_bits(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3F82);
  // Just above halfway rounds up.
  CHECK(to_bf16_bits(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)) == 0x3F81);
  CHECK(std::isnan(from_bf16_bits(to_bf16_bits(NAN))));
  CHECK(std::isinf(from_bf16_bits(to_bf16_bits(INFINITY))));
  CHECK(from_bf16_bits(0x3F80) == 1.0f);
  // Subnormals (below 2^-126) go to a zero of their sign, as vcvtneps2bf16 (which treats them as
  // zero) and oneDNN's reorders give them; the smallest normal is kept.
  CHECK(to_bf16_bits(1e-39f) == 0x0000);
  CHECK(to_bf16_bits(-3e-39f) == 0x8000);
  CHECK(to_bf16_bits(std::numeric_limits<float>::denorm_min()) == 0x0000);
  CHECK(to_bf16_bits(std::nextafter(std::numeric_limits<float>::min(), 0.f)) == 0x0000);
  CHECK(to_bf16_bits(std::numeric_limits<float>::min()) == 0x0080);
  CHECK(to_bf16_bits(-0.0f) == 0x8000);

  std::mt19937 gen(11);
  std::vector<float> v = randn(1000, gen, 100.f);
  v[0] = NAN;
  v[1] = -INFINITY;
  // Subnormals, and normals just above FLT_MIN (1.1755e-38).
  const float tiny[] = {1e-39f, -3e-39f, 5e-41f, -1.1e-38f, 1.2e-38f, -1.2e-38f};
  std::copy(std::begin(tiny), std::end(tiny), v.begin() + 2);
  // oneDNN's own reorder, whichever implementation this CPU gets (JIT with AVX-512, its generic
  // `simple:any` without), not to_bf16_flat, which may be our loop.
  std::vector<uint16_t> ours = bits(v), onednn(v.size());
  using dnnl::memory;
  const memory::desc from({static_cast<int64_t>(v.size())}, memory::data_type::f32, memory::format_tag::a);
  const memory::desc to({static_cast<int64_t>(v.size())}, memory::data_type::bf16, memory::format_tag::a);
  memory src(from, cpu_engine(), v.data()), dst(to, cpu_engine(), onednn.data());
  dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), from, cpu_engine(), to))
      .execute(cpu_stream(), src, dst);
  cpu_stream().wait();
  CHECK(std::isnan(from_bf16_bits(onednn[0])));
  onednn[0] = ours[0];  // NaN payloads may differ; NaN stays NaN
  CHECK(ours == onednn);
}

TEST_CASE("bf16 loops: our cloned conversions give to_bf16_bits' bits, widen exactly, in parallel spans") {
  // Long enough for parallel_spans to split it; specials at both ends and inside each span.
  std::mt19937 gen(17);
  std::vector<float> v = randn(100003, gen, 1000.f);
  const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1.0f + std::ldexp(1.0f, -8),
                            std::ldexp(1.0f, -140), 3.4e38f, -1.17549435e-38f};
  for (size_t i = 0; i < std::size(specials); ++i) {
    v[i] = specials[i];
    v[v.size() / 2 + i] = specials[i];
    v[v.size() - 1 - i] = specials[i];
  }
  std::vector<uint16_t> loop(v.size()), flat(v.size());
  bf16_round_loop(v.data(), loop.data(), static_cast<int64_t>(v.size()));
  to_bf16_flat(v.data(), flat.data(), static_cast<int64_t>(v.size()));
  CHECK(loop == bits(v));
  CHECK(flat == bits(v));

  std::vector<float> widened(v.size()), trip(v.size());
  bf16_widen_loop(loop.data(), widened.data(), static_cast<int64_t>(v.size()));
  bf16_round_trip_loop(v.data(), trip.data(), static_cast<int64_t>(v.size()));
  const std::vector<float> want = rounded(v);
  int64_t bad_widen = 0, bad_trip = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    const bool nan = std::isnan(want[i]);
    bad_widen += nan ? !std::isnan(widened[i]) : widened[i] != want[i];
    bad_trip += nan ? !std::isnan(trip[i]) : trip[i] != want[i];
  }
  CHECK(bad_widen == 0);
  CHECK(bad_trip == 0);
  // By hand: 1 + 2^-8 is a tie and goes to even (1), 1 + 3·2^-9 rounds up to 1 + 2^-7.
  float two[] = {1.0f + std::ldexp(1.0f, -8), 1.0f + 3 * std::ldexp(1.0f, -9)}, out[2];
  bf16_round_trip_loop(two, out, 2);
  CHECK(out[0] == 1.0f);
  CHECK(out[1] == 1.0f + std::ldexp(1.0f, -7));
}

TEST_CASE("bf16 loops: round_to_bf16 (and scaled) gives to_bf16_bits' bits at every length and offset") {
  // On a CPU with AVX512_BF16 this is vcvtneps2bf16 (16 values an instruction, then a scalar
  // tail); elsewhere the cloned loop. Specials: signed zeros, infinities, quiet and signalling NaNs
  // with payloads, subnormals, the smallest normal, ties to even, and the largest finite value,
  // which rounds up to infinity.
  std::mt19937 gen(23);
  std::vector<float> v = randn(4096, gen, 30.f);
  const uint32_t special_bits[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,
                                   0x7fc00000u, 0x7f800001u, 0xff812345u, 0x7fbfffffu,
                                   0x00000001u, 0x807fffffu, 0x00800000u, 0x3f808000u,
                                   0x3f818000u, 0x7f7fffffu, 0xff7fffffu, 0x3f80ffffu};
  for (size_t i = 0; i < std::size(special_bits); ++i)
    for (size_t at : {i, 100 + 3 * i, v.size() - 1 - i}) v[at] = std::bit_cast<float>(special_bits[i]);
  const std::vector<uint16_t> want = bits(v);
  for (int64_t offset : {0, 1, 7}) {
    for (int64_t n = 0; n <= 40; ++n) {
      std::vector<uint16_t> got(n + 2, 0xAAAA);
      round_to_bf16(v.data() + offset, got.data() + 1, n);
      REQUIRE(got.front() == 0xAAAA);  // nothing written outside [0, n)
      REQUIRE(got.back() == 0xAAAA);
      for (int64_t i = 0; i < n; ++i) REQUIRE(got[1 + i] == want[offset + i]);
      round_to_bf16_scaled(v.data() + offset, 0.37f, got.data() + 1, n);
      REQUIRE(got.back() == 0xAAAA);
      for (int64_t i = 0; i < n; ++i) REQUIRE(got[1 + i] == to_bf16_bits(v[offset + i] * 0.37f));
    }
  }
  std::vector<uint16_t> all(v.size());
  round_to_bf16(v.data(), all.data(), static_cast<int64_t>(v.size()));
  CHECK(all == want);
  CHECK(to_bf16_bits(std::bit_cast<float>(0x7f7fffffu)) == 0x7f80);  // by hand: up to infinity
  CHECK(to_bf16_bits(std::bit_cast<float>(0x7f800001u)) == 0x7fc0);  // signalling NaN made quiet
}

TEST_CASE("matmul_bf16: pre-converted operands in every layout equal f32 products of the rounded values") {
  std::mt19937 gen(13);
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (bool acc : {false, true})
        for (bool bias : {false, true}) {
          MatmulShape s{.batch = 2, .m = 19, .n = 37, .k = 21, .trans_a = ta, .trans_b = tb,
                        .accumulate = acc, .bias = bias, .bf16 = true};
          const auto a = randn(s.batch * s.m * s.k, gen), b = randn(s.batch * s.k * s.n, gen);
          const auto bv = randn(s.n, gen), c0 = randn(s.batch * s.m * s.n, gen);
          std::vector<float> c = c0, ref = c0;
          matmul_bf16(s, bits(a).data(), bits(b).data(), c.data(), bias ? bv.data() : nullptr);
          MatmulShape f32 = s;
          f32.bf16 = false;
          matmul_naive(f32, rounded(a).data(), rounded(b).data(), ref.data(),
                       bias ? bv.data() : nullptr);
          INFO("trans_a " << ta << " trans_b " << tb << " accumulate " << acc << " bias " << bias);
          // Same products of the same (rounded) values; only the f32 summation order differs.
          for (size_t i = 0; i < c.size(); ++i)
            CHECK(c[i] == doctest::Approx(ref[i]).epsilon(1e-5).scale(1.0));
        }
  MatmulShape not_bf16{.m = 2, .n = 2, .k = 2};
  uint16_t x[4] = {};
  float y[4];
  CHECK_THROWS(matmul_bf16(not_bf16, x, x, y));
}

TEST_CASE("Tape::bf16_of: one conversion per value while it is held, none stale after backward") {
  Tape tape;
  Var x = make_var(Tensor::from({2, 2}, {1.0f, -2.5f, 1.0f + std::ldexp(1.0f, -8) * 3, 7.0f}));
  auto first = tape.bf16_of(x);
  REQUIRE(first->size() == 4);
  CHECK(first->data()[0] == 0x3F80);
  CHECK(first->data()[2] == 0x3F82);
  CHECK(tape.bf16_of(x).get() == first.get());  // shared, not converted again
  Var other = make_var(Tensor::from({1}, {2.0f}));
  auto second = tape.bf16_of(other);
  CHECK(second.get() != first.get());
  CHECK(tape.bf16_of(x).get() == first.get());  // still held by `first`
  tape.clear();                                   // a new step: nothing is reused
  x->value.data()[0] = 3.0f;
  auto third = tape.bf16_of(x);
  CHECK(third.get() != first.get());
  CHECK(from_bf16_bits(third->data()[0]) == 3.0f);
}

TEST_CASE("rms_norm on a bf16 tape: its output's bf16 copy is written with it and not converted again") {
  std::mt19937 gen(31);
  const int64_t rows = 600, d = 72;  // 43,200 values: split over the threads; d not a multiple of 16
  Var x = make_var(Tensor::from({rows, d}, randn(rows * d, gen, 3.f)));
  Tape tape;
  tape.set_bf16(true);
  Var y = rms_norm(tape, x, nullptr);
  const std::vector<float> values(y->value.data(), y->value.data() + rows * d);
  // Changed after the op: a copy converted now would hold 5, the op's own copy the op's values.
  y->value.data()[3] = 5.0f;
  auto copy = tape.bf16_of(y);
  REQUIRE(copy->size() == rows * d);
  int64_t bad = 0;
  for (int64_t i = 0; i < rows * d; ++i) bad += copy->data()[i] != to_bf16_bits(values[i]);
  CHECK(bad == 0);
  CHECK(tape.bf16_of(y).get() == copy.get());
  Tape f32_tape;  // an f32 tape offers nothing: its products read the f32 values
  Var z = rms_norm(f32_tape, x, nullptr);
  z->value.data()[3] = 5.0f;
  CHECK(from_bf16_bits(f32_tape.bf16_of(z)->data()[3]) == 5.0f);
}

TEST_CASE("linear in bf16: forward and all gradients match f32 on the rounded operands, shared input accumulates") {
  // y_i = x W_iᵀ + b_i for three weights sharing x (q, k and v), loss = Σ_i Σ y_i ⊙ R_i.
  Rng rng(21);
  auto make = [&](const Shape& shape) {
    Tensor t = Tensor::empty(shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<float>(rng.normal());
    return make_var(t, true);
  };
  Var x = make({3, 5, 24});
  std::vector<Var> w = {make({16, 24}), make({16, 24}), make({8, 24})};
  std::vector<Var> b = {make({16}), make({16}), make({8})};
  std::vector<Tensor> r;
  for (int i = 0; i < 3; ++i) r.push_back(make({3, 5, w[i]->value.dim(0)})->value);
  auto run = [&](bool bf16) {
    for (Var v : {x, w[0], w[1], w[2], b[0], b[1], b[2]}) v->grad() = Tensor();
    Tape tape;
    tape.set_bf16(bf16);
    Var loss;
    for (int i = 0; i < 3; ++i) {
      Var term = weighted_sum(tape, linear(tape, x, w[i], b[i]), r[i]);
      loss = loss ? add(tape, loss, term) : term;
    }
    tape.backward(loss);
    std::vector<std::vector<float>> grads;
    for (Var v : {x, w[0], w[1], w[2], b[0], b[1], b[2]}) grads.push_back(v->grad().to_vector());
    grads.push_back({loss->value.data()[0]});
    return grads;
  };
  const auto f32 = run(false);
  const auto bf = run(true);
  // Also f32 versus finite differences for the shared-input accumulation path.
  auto res = grad_check(
      [&](Tape& t) {
        Var l = weighted_sum(t, linear(t, x, w[0], b[0]), r[0]);
        return add(t, l, weighted_sum(t, linear(t, x, w[1], b[1]), r[1]));
      },
      {x, w[0], w[1], b[0]});
  INFO(res.worst);
  CHECK(res.max_rel_error < 2e-2);
  for (size_t i = 0; i < f32.size(); ++i) {
    INFO("gradient " << i);
    const double rel = rel_l2(bf[i].data(), f32[i].data(), static_cast<int64_t>(f32[i].size()));
    CHECK(rel < 2e-2);  // bf16 operands: 8 significant bits
    if (i < 4) CHECK(rel > 1e-6);  // and the products really ran in bf16 (bias grads stay f32)
  }
}

TEST_CASE("lm_head_cross_entropy in bf16: loss and gradients within bf16 rounding of f32, ignored rows") {
  Rng rng(23);
  auto make = [&](const Shape& shape, double scale) {
    Tensor t = Tensor::empty(shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<float>(rng.normal() * scale);
    return make_var(t, true);
  };
  Var hidden = make({37, 32}, 1.0), weight = make({101, 32}, 0.3);
  std::vector<int32_t> targets(37);
  for (int i = 0; i < 37; ++i) targets[i] = i % 5 == 0 ? kIgnoreIndex : (i * 17) % 101;
  auto run = [&](bool bf16) {
    hidden->grad() = Tensor();
    weight->grad() = Tensor();
    Tape tape;
    tape.set_bf16(bf16);
    LmLoss l = lm_head_cross_entropy(tape, hidden, weight, targets, 8);
    tape.backward(l.loss);
    return std::make_tuple(l.sum_nll, l.n_targets, hidden->grad().to_vector(), weight->grad().to_vector());
  };
  auto [nll32, n32, dh32, dw32] = run(false);
  auto [nll16, n16, dh16, dw16] = run(true);
  CHECK(n32 == 29);
  CHECK(n16 == 29);
  CHECK(nll16 == doctest::Approx(nll32).epsilon(1e-2));
  CHECK(nll16 != nll32);
  CHECK(rel_l2(dh16.data(), dh32.data(), static_cast<int64_t>(dh32.size())) < 2e-2);
  CHECK(rel_l2(dw16.data(), dw32.data(), static_cast<int64_t>(dw32.size())) < 2e-2);
  // The ignored rows get no gradient in either precision.
  for (int j = 0; j < 32; ++j) {
    CHECK(dh16[j] == 0.0f);
    CHECK(dh32[5 * 32 + j] == 0.0f);
  }
}

TEST_CASE("swiglu in bf16: within bf16 rounding of f32, and the unfused ops on a bf16 tape") {
  // The fused op writes its gated product and the branches' gradients in bf16 itself; the unfused
  // ops (linear, silu, mul, linear) convert the same f32 values, so the two differ only where
  // silu's last bits (ours against oneDNN's swish) move a value across a bf16 rounding boundary.
  Rng rng(25);
  auto make = [&](const Shape& shape, double scale) {
    Tensor t = Tensor::empty(shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<float>(rng.normal() * scale);
    return make_var(t, true);
  };
  Var x = make({4, 50, 32}, 1.0);
  std::vector<Var> p = {make({96, 32}, 0.3), make({96}, 0.1), make({96, 32}, 0.3),
                        make({96}, 0.1),     make({32, 96}, 0.2), make({32}, 0.1)};
  const Tensor r = make({4, 50, 32}, 1.0)->value;
  auto run = [&](bool bf16, bool fused) {
    x->grad() = Tensor();
    for (Var& v : p) v->grad() = Tensor();
    Tape tape;
    tape.set_bf16(bf16);
    Var y = fused ? swiglu(tape, x, {p[0], p[1], p[2], p[3], p[4], p[5]})
                  : linear(tape,
                           mul(tape, eltwise(tape, linear(tape, x, p[0], p[1]), Eltwise::Silu),
                               linear(tape, x, p[2], p[3])),
                           p[4], p[5]);
    tape.backward(weighted_sum(tape, y, r));
    std::vector<std::vector<float>> out = {y->value.to_vector(), x->grad().to_vector()};
    for (Var& v : p) out.push_back(v->grad().to_vector());
    return out;
  };
  const auto f32 = run(false, true), bf = run(true, true), unfused = run(true, false);
  for (size_t i = 0; i < f32.size(); ++i) {
    INFO("output " << i << " (y, dx, dw1, db1, dw2, db2, dw3, db3)");
    const int64_t n = static_cast<int64_t>(f32[i].size());
    const double vs_f32 = rel_l2(bf[i].data(), f32[i].data(), n);
    const double vs_unfused = rel_l2(bf[i].data(), unfused[i].data(), n);
    INFO("against f32 " << vs_f32 << ", against the unfused ops " << vs_unfused);
    CHECK(vs_f32 < 2e-2);  // bf16 operands: 8 significant bits
    if (i != 7) CHECK(vs_f32 > 1e-6);  // the products really ran in bf16 (db3 sums dy alone)
    CHECK(vs_unfused < 1e-5);  // seen: 0 to 1.4e-7
  }
}

TEST_CASE("bf16 weight copies: kept by AdamW's pass, the same bits as converting at every forward") {
  // Two copies of one linear layer train 3 AdamW steps on a bf16 tape: A keeps the weight's bf16
  // copy from step to step (the optimizer rewrites it), B marks it out of date before every
  // forward, so its products convert W again. Losses and weights must agree bit for bit.
  Rng rng(5);
  auto values = [&](int64_t n) {
    std::vector<float> v(n);
    for (float& f : v) f = static_cast<float>(rng.normal());
    return v;
  };
  const std::vector<float> w0 = values(12 * 20), b0 = values(12), x0 = values(6 * 20), r0 = values(6 * 12);
  struct Layer {
    Var w, b;
    std::unique_ptr<AdamW> opt;
  };
  auto make_layer = [&] {
    Layer l{make_var(Tensor::from({12, 20}, w0), true), make_var(Tensor::from({12}, b0), true), nullptr};
    l.opt = std::make_unique<AdamW>(std::vector<std::pair<std::string, Var>>{{"w", l.w}, {"b", l.b}},
                                    AdamWOptions{0.9, 0.99, 1e-8, 0.01});
    return l;
  };
  Layer a = make_layer(), b = make_layer();
  const Var x = make_var(Tensor::from({6, 20}, x0));
  const Tensor r = Tensor::from({6, 12}, r0);
  auto step = [&](Layer& l, bool reconvert) {
    if (reconvert) l.w->values_changed();
    Tape tape;
    tape.set_bf16(true);
    Var loss = weighted_sum(tape, linear(tape, x, l.w, l.b), r);
    tape.backward(loss);
    l.opt->step(1e-2);
    l.w->grad() = Tensor();
    l.b->grad() = Tensor();
    return loss->value.data()[0];
  };
  for (int i = 0; i < 3; ++i) {
    const std::shared_ptr<Bf16Buffer> held = a.w->bf16_copy;  // someone still reading last step's copy
    const std::vector<uint16_t> before = held ? std::vector<uint16_t>(held->data(), held->data() + held->size())
                                              : std::vector<uint16_t>();
    CHECK(step(a, false) == step(b, true));
    CHECK(a.w->value.to_vector() == b.w->value.to_vector());
    if (held) {  // a held copy is replaced, not rewritten under its holder
      CHECK(a.w->bf16_copy.get() != held.get());
      CHECK(std::equal(before.begin(), before.end(), held->data()));
    }
  }
  // After the last step the copy holds the new weights' bf16 bits; the bias never had one.
  REQUIRE(a.w->bf16_copy);
  CHECK(a.w->bf16_current);
  for (int64_t i = 0; i < a.w->value.numel(); ++i) CHECK(a.w->bf16_copy->data()[i] == to_bf16_bits(a.w->value.data()[i]));
  CHECK(!a.b->bf16_copy);
  // A write outside the optimizer (as a checkpoint load does) with values_changed(): the next
  // training forward converts the new values; an evaluation tape never uses the kept copy.
  a.w->value.fill(0.5f);
  Tape eval;
  eval.set_bf16(true);
  eval.set_enabled(false);
  Var y = linear(eval, x, a.w, Var());
  double expected = 0;  // row 0 of x (rounded to bf16) times W = 0.5 everywhere
  for (int j = 0; j < 20; ++j) expected += 0.5 * from_bf16_bits(to_bf16_bits(x0[j]));
  CHECK(y->value.data()[0] == doctest::Approx(expected).epsilon(1e-5));
  a.w->values_changed();
  Tape train;
  train.set_bf16(true);
  linear(train, x, a.w, a.b);
  CHECK(a.w->bf16_current);
  CHECK(a.w->bf16_copy->data()[7] == to_bf16_bits(0.5f));
}
