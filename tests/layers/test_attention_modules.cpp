// Whole-module checks of the token mixers and the T1 decoder: finite-difference gradients through
// projections, φ, URPE, the attention core, the norm and W_o for every grad probe of every test
// variant in the mixer table (layers/attention/mixer_table.h); causality of the full T1 decoder
// (a future token never changes a past output).
#include <doctest/doctest.h>

#include <cmath>

#include "core/runtime/autograd/grad_check.h"
#include "layers/models/transnormer.h"
#include "tests/layers/mixer_test_cases.h"
#include "tests/layers/small_model.h"

using namespace tn;

namespace {

using mixer_test::MixerCase;
using mixer_test::mixer_cases;

ModelConfig small_config(int64_t d_model, int64_t n_heads) {
  return test::small_model_config({.vocab_size = 50, .d_model = d_model, .n_heads = n_heads,
                                   .layers = {MixerKind::Diag, MixerKind::NormAttention}});
}

Tensor randn(const Shape& shape, Rng& rng, double scale = 1.0) {
  Tensor t = Tensor::empty(shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<float>(rng.normal() * scale);
  return t;
}

/// FD check of a token mixer: gradients w.r.t. its input and every parameter (URPE angles only
/// when with_theta: a step of 1e-2 in theta_0 turns position 69 by 0.69 rad, far outside the
/// linear range of central differences, so long sequences check theta through the kernel tests).
void check_mixer_grads(TokenMixer& mixer, ParamStore& store, int64_t batch, int64_t seq_len,
                       int64_t d_model, bool with_theta = true, double eps = 1e-2) {
  Rng rng(11);
  Var x = make_var(randn({batch, seq_len, d_model}, rng), true);
  Tensor r = randn({batch, seq_len, d_model}, rng);
  std::vector<Var> inputs = {x};
  for (const auto& [name, var] : store.parameters())
    if (with_theta || name.find("urpe.theta") == std::string::npos) inputs.push_back(var);
  Rng dropout_rng(0);
  auto res = grad_check(
      [&](Tape& tape) {
        ForwardContext ctx{tape, false, dropout_rng, nullptr};
        return weighted_sum(tape, mixer.forward(ctx, x), r);
      },
      inputs, eps, 12, 5e-2);
  INFO(res.worst);
  // f32 central differences: rounding noise grows as 1/eps.
  CHECK(res.max_rel_error < (eps < 1e-2 ? 8e-2 : 3e-2));
}

}  // namespace

// Every grad probe of every test variant in the mixer table, in the causal and the bidirectional
// form. A mixer whose variants have no probes says why in its entry (Performer: its stabiliser).
TEST_CASE("every mixer module, causal and bidirectional: FD gradients of its variants' probes") {
  int checked = 0;
  for (const MixerCase& mc : mixer_cases())
    for (const GradProbe& probe : mc.variant->grad_probes)
      for (Arch arch : {Arch::Decoder, Arch::Encoder}) {
        ModelConfig c = mc.apply(small_config(16, 2));
        c.arch = arch;
        ParamStore store;
        Rng rng(5);  // one seed for all: the FD margins depend on it (ReLU kinks, norm rounding)
        const std::unique_ptr<TokenMixer> mixer = mc.entry->make(c, store, "m", rng);
        INFO(mc.name() << std::string(arch == Arch::Encoder ? ", encoder" : ", decoder") << ": batch "
                       << probe.batch << ", seq_len " << probe.seq_len << ", eps " << probe.eps
                       << std::string(probe.with_theta ? "" : ", theta held"));
        check_mixer_grads(*mixer, store, probe.batch, probe.seq_len, c.d_model, probe.with_theta, probe.eps);
        ++checked;
      }
  CHECK(checked > 0);  // the table has probes at all (test_mixer_table.cpp checks every entry's)
}

TEST_CASE("T1 decoder causality: tokens after t never change outputs at positions <= t") {
  ModelConfig c = small_config(32, 4);
  c.layers = {MixerKind::Diag, MixerKind::Diag, MixerKind::NormAttention, MixerKind::NormAttention};
  c.n_layers = 4;
  c.max_positions = 512;
  TransNormerModel model(c, 3);
  Tape tape;
  tape.set_enabled(false);
  Rng rng(1);
  ForwardContext ctx{tape, false, rng, nullptr};
  for (int64_t seq_len : {1, 63, 64, 65, 197}) {
    std::vector<int32_t> tokens(seq_len);
    for (int64_t i = 0; i < seq_len; ++i) tokens[i] = static_cast<int32_t>(rng.next_u64() % 50);
    const Tensor base = model.forward(ctx, tokens, 1, seq_len)->value.clone();
    const int64_t t = seq_len / 2;
    std::vector<int32_t> changed = tokens;
    for (int64_t i = t + 1; i < seq_len; ++i) changed[i] = (changed[i] + 7) % 50;
    const Tensor other = model.forward(ctx, changed, 1, seq_len)->value;
    bool past_identical = true, future_changed = seq_len - 1 <= t;
    for (int64_t i = 0; i < seq_len * c.d_model; ++i) {
      if (i / c.d_model <= t) past_identical &= base.data()[i] == other.data()[i];
      else future_changed |= base.data()[i] != other.data()[i];
    }
    INFO("seq_len " << seq_len);
    CHECK(past_identical);
    CHECK(future_changed);  // the test could fail: later positions do see the change
  }
}
