// Properties every token mixer must have, checked on whole models built from the registry, for
// every test variant of every entry of the mixer table (layers/attention/mixer_table.h):
//   causality (decoders): tokens after t never change outputs at positions <= t, at lengths
//     1, C-1, C, C+1, 3C+5 (C = the variant's probe_size: chunk or block size), and the token at
//     t + 1 does change a later output of its chunk or block (the future is seen);
//   padding invariance (encoders and decoders): a right-padded batch gives, at real positions, the
//     outputs of each sequence alone;
//   classic linear attention (normalize: scaling) returns V unchanged when all values are equal,
//   and stays finite at 16k tokens.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "layers/attention/linear_attention.h"
#include "layers/models/transnormer.h"
#include "tests/layers/mixer_test_cases.h"
#include "tests/layers/small_model.h"

using namespace tn;

namespace {

using mixer_test::MixerCase;
using mixer_test::mixer_cases;

ModelConfig config_for(const MixerCase& mc, Arch arch) {
  ModelConfig c = test::small_model_config({.arch = arch});  // max_positions: the default 512
  if (arch == Arch::Encoder) {
    c.prenorm = false;
    c.final_norm = false;
    c.norm = NormKind::LayerNorm;
    c.positional = Positional::Learned;
    c.head = HeadKind::MLM;
  }
  return mc.apply(c);
}

std::vector<int32_t> random_tokens(int64_t n, Rng& rng) {
  std::vector<int32_t> out(n);
  for (auto& t : out) t = 3 + static_cast<int32_t>(rng.next_u64() % 37);
  return out;
}

}  // namespace

TEST_CASE("every causal mixer: a future token never changes a past output, and is seen later") {
  for (const MixerCase& mc : mixer_cases()) {
    TransNormerModel model(config_for(mc, Arch::Decoder), 4);
    Tape tape;
    tape.set_enabled(false);
    Rng rng(2);
    ForwardContext ctx{tape, false, rng, nullptr};
    const int64_t c = mc.variant->probe_size;
    for (int64_t seq_len : {int64_t{1}, c - 1, c, c + 1, 3 * c + 5}) {
      for (int64_t t : {int64_t{0}, seq_len / 2, seq_len - 2}) {
        if (t < 0 || t >= seq_len) continue;
        std::vector<int32_t> tokens = random_tokens(seq_len, rng);
        const Tensor base = model.forward(ctx, tokens, 1, seq_len)->value.clone();
        for (int64_t i = t + 1; i < seq_len; ++i) tokens[i] = 3 + (tokens[i] + 5) % 37;
        const Tensor other = model.forward(ctx, tokens, 1, seq_len)->value.clone();
        bool past_identical = true;
        for (int64_t i = 0; i < (t + 1) * 16; ++i) past_identical &= base.data()[i] == other.data()[i];
        INFO(mc.name() << ": seq_len " << seq_len << ", t " << t);
        CHECK(past_identical);
        // The future is seen: the token at t + 1 reaches the later positions of its chunk or
        // block only through the mixer (the residual and the channel mixer work per position),
        // so a mixer that ignores its input fails here. (One position alone may not see it: a
        // ReLU score can be 0 in every head.)
        const int64_t block_end = std::min(seq_len, ((t + 1) / c + 1) * c);
        if (t + 2 < block_end) {
          std::vector<int32_t> one = tokens;
          one[t + 1] = 3 + (one[t + 1] + 11) % 37;
          const Tensor seen = model.forward(ctx, one, 1, seq_len)->value;
          bool later_changed = false;
          for (int64_t i = (t + 2) * 16; i < block_end * 16; ++i)
            later_changed |= other.data()[i] != seen.data()[i];
          CHECK(later_changed);
        }
      }
    }
  }
}

TEST_CASE("every mixer, encoder and decoder: padding never changes real positions") {
  for (const MixerCase& mc : mixer_cases())
    for (Arch arch : {Arch::Encoder, Arch::Decoder}) {
      TransNormerModel model(config_for(mc, arch), 5);
      Tape tape;
      tape.set_enabled(false);
      Rng rng(3);
      const std::vector<int64_t> lengths = {23, 9, 1};
      const int64_t padded = 37;  // > 2 blocks of 16, not a multiple of anything used
      std::vector<int32_t> batch(lengths.size() * padded);
      std::vector<uint8_t> valid(batch.size(), 0);
      std::vector<std::vector<int32_t>> alone;
      for (size_t b = 0; b < lengths.size(); ++b) {
        alone.push_back(random_tokens(lengths[b], rng));
        for (int64_t t = 0; t < padded; ++t) {
          const bool real = t < lengths[b];
          batch[b * padded + t] = real ? alone[b][t] : 3 + static_cast<int32_t>(rng.next_u64() % 37);
          valid[b * padded + t] = real;
        }
      }
      ForwardContext padded_ctx{tape, false, rng, &valid};
      const Tensor together = model.forward(padded_ctx, batch, lengths.size(), padded)->value.clone();
      double worst = 0.0;
      for (size_t b = 0; b < lengths.size(); ++b) {
        ForwardContext ctx{tape, false, rng, nullptr};
        const Tensor single = model.forward(ctx, alone[b], 1, lengths[b])->value;
        for (int64_t i = 0; i < lengths[b] * 16; ++i)
          worst = std::max(worst, static_cast<double>(std::abs(single.data()[i] -
                                                               together.data()[b * padded * 16 + i])));
      }
      INFO(mc.name() << (arch == Arch::Encoder ? " encoder" : " decoder") << ": max difference " << worst);
      CHECK(worst < 1e-5);
    }
}

TEST_CASE("linear attention with scaling returns V unchanged for constant values, finite at 16k tokens") {
  ModelConfig c;
  c.arch = Arch::Encoder;
  c.d_model = 8;
  c.n_heads = 2;
  c.relative = Relative::None;
  ParamStore store;
  Rng rng(9);
  LinearAttention mixer(c, c.attention.linear, store, "m", rng);  // 1+elu, scaling
  // Make v constant: zero v weights, bias = values; identity W_o with zero bias shows o directly.
  const std::vector<float> values = {0.5f, -1.25f, 2.0f, 3.5f, -0.75f, 0.25f, 1.0f, -2.0f};
  auto& entries = store.entries();
  entries.at("m.v_proj.weight")->value.zero();
  std::copy(values.begin(), values.end(), entries.at("m.v_proj.bias")->value.data());
  Tensor& wo = entries.at("m.out_proj.weight")->value;
  wo.zero();
  for (int64_t i = 0; i < 8; ++i) wo.data()[i * 8 + i] = 1.0f;
  entries.at("m.out_proj.bias")->value.zero();
  for (Arch arch : {Arch::Encoder, Arch::Decoder}) {
    c.arch = arch;
    ParamStore store2;
    Rng rng2(9);
    LinearAttention m2(c, c.attention.linear, store2, "m", rng2);
    for (const auto& [name, var] : store2.entries()) var->value.copy_from(entries.at(name)->value);
    for (int64_t seq_len : {int64_t{5}, int64_t{16384}}) {
      Tape tape;
      tape.set_enabled(false);
      ForwardContext ctx{tape, false, rng, nullptr};
      Tensor x = Tensor::empty({1, seq_len, 8});
      for (int64_t i = 0; i < x.numel(); ++i) x.data()[i] = static_cast<float>(rng.normal() * 3.0);
      const Tensor o = m2.forward(ctx, make_var(x))->value;
      double worst = 0.0;
      bool finite = true;
      for (int64_t i = 0; i < o.numel(); ++i) {
        finite &= std::isfinite(o.data()[i]);
        worst = std::max(worst, static_cast<double>(std::abs(o.data()[i] - values[i % 8])));
      }
      INFO((arch == Arch::Encoder ? "encoder" : "decoder") << " seq_len " << seq_len << ": worst " << worst);
      CHECK(finite);
      CHECK(worst < 1e-3 * (seq_len > 100 ? 10 : 1));
    }
  }
}
