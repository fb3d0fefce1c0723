// Whole-module checks for the paper's two token mixers (NormAttention, DiagAttention) and the T1
// decoder: finite-difference gradients through projections, φ, URPE, the attention core, the norm
// and W_o; causality of the full decoder (a future token never changes a past output).
#include <doctest/doctest.h>

#include <cmath>

#include "core/autograd/grad_check.h"
#include "layers/attention/cosformer.h"
#include "layers/attention/diag_attention.h"
#include "layers/attention/linear_attention.h"
#include "layers/attention/softmax_attention.h"
#include "layers/models/transnormer.h"

using namespace tn;

namespace {

ModelConfig small_config(int64_t d_model, int64_t n_heads) {
  ModelConfig c;
  c.vocab_size = 50;
  c.d_model = d_model;
  c.n_heads = n_heads;
  c.n_layers = 2;
  c.layers = {MixerKind::Diag, MixerKind::NormAttention};
  c.channel_mixer.d_ff = 2 * d_model;
  c.dropout = 0.0;
  return c;
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

TEST_CASE("NormAttention module (T1: elu + srmsnorm, URPE), causal across chunks: FD gradients") {
  ModelConfig c = small_config(16, 2);
  ParamStore store;
  Rng rng(5);
  LinearOptions options;
  options.kernel = Kernel::Elu;
  options.scaling = false;
  options.norm = NormKind::SRMSNorm;
  LinearAttention mixer(c, options, store, "m", rng);
  check_mixer_grads(mixer, store, 1, 70, 16, false);  // 70 > chunk 64: crosses the kv_state hand-off
  check_mixer_grads(mixer, store, 2, 9, 16, true);
}

TEST_CASE("NormAttention module (T2: 1+elu), and classic linear attention with scaling: FD gradients") {
  ModelConfig c = small_config(16, 2);
  for (bool scaling : {false, true}) {
    ParamStore store;
    Rng rng(6);
    LinearOptions options;
    options.kernel = Kernel::OnePlusElu;
    options.scaling = scaling;
    options.norm = NormKind::SRMSNorm;
    LinearAttention mixer(c, options, store, "m", rng);
    INFO("scaling " << scaling);
    check_mixer_grads(mixer, store, 2, 9, 16);
  }
}

// The norm is left out here: with ReLU inside, a row whose every score is negative is exactly zero,
// and SRMSNorm maps a zero row to 0 but a tiny one to unit RMS, a jump that finite differences
// cannot cross. The relu + srmsnorm combination is checked against PyTorch's autograd instead
// (golden dec_diag_relu and dec_t1 in tests/experiments/test_golden.cpp).
TEST_CASE("DiagAttention module (relu, softmax), partial last block: FD gradients") {
  for (DiagInner inner : {DiagInner::Relu, DiagInner::Softmax}) {
    ModelConfig c = small_config(16, 2);
    ParamStore store;
    Rng rng(7);
    DiagOptions options;
    options.block_size = 8;
    options.inner = inner;
    options.norm = NormKind::None;
    DiagAttention mixer(c, options, store, "m", rng);
    INFO("inner " << static_cast<int>(inner));
    // ReLU's kink: with a step of 1e-3 no score of this case crosses zero, except under a change
    // of theta, which moves every score at once (theta's gradient with period = block_size is
    // checked in tests/layers/kernels and against PyTorch in the golden cases).
    const bool relu = inner == DiagInner::Relu;
    check_mixer_grads(mixer, store, 1, 19, 16, !relu, relu ? 1e-3 : 1e-2);
  }
}

// Performer is left out: its stabiliser is a constant for autograd (docs/model.md §8), so
// plain finite differences, which move the stabiliser too, differentiate another function
// wherever a denominator is clamped. Its kernel is checked with the stabiliser held fixed
// (tests/layers/kernels/test_performer_features.cpp) and the module against PyTorch's autograd
// (golden dec_performer, enc_performer).
TEST_CASE("softmax and cosformer modules, causal and bidirectional: FD gradients") {
  for (Arch arch : {Arch::Decoder, Arch::Encoder}) {
    ModelConfig c = small_config(16, 2);
    c.arch = arch;
    c.relative = Relative::RoPE;
    {
      ParamStore store;
      Rng rng(8);
      SoftmaxAttention mixer(c, store, "m", rng);
      INFO("softmax");
      check_mixer_grads(mixer, store, 2, 9, 16);
    }
    for (bool out_proj : {true, false}) {
      ParamStore store;
      Rng rng(10);
      CosformerOptions options;
      options.out_proj = out_proj;
      CosFormer mixer(c, options, store, "m", rng);
      INFO("cosformer, out_proj " << out_proj);
      // relu inside: a short sequence and a step of 1e-3 keep the check off the kink.
      check_mixer_grads(mixer, store, 1, 9, 16, true, 1e-3);
    }
  }
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
