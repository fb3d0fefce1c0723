// The mixer walkthrough of docs/architecture.md ("Add a token mixer"), followed outside the
// library: uniform_attention.{h,cpp} (step 1; it has no options, so no step 2),
// uniform_attention_entry.cpp (step 3), add_mixer in place of its line in mixer_table.cpp (step
// 4). The table-driven tests of this binary (causality, padding, finite differences, decoding,
// option round trips) run it as they run the library's mixers; this file checks that it is in
// the table, that a config names it, and its output by hand.
#include <doctest/doctest.h>

#include <algorithm>

#include "layers/attention/mixer_table.h"
#include "layers/config/model_config_json.h"
#include "layers/config/parameter_floor.h"
#include "layers/models/transnormer.h"
#include "tests/layers/small_model.h"
#include "tests/layers/walkthroughs/uniform_attention.h"

using namespace tn;

TEST_CASE("mixer walkthrough: the example is in the table after the library's mixers, and configs name it") {
  const MixerEntry* entry = find_mixer("uniform");
  REQUIRE(entry != nullptr);
  CHECK(static_cast<int>(entry->kind) >= kFirstAddedMixerKind);
  CHECK(&mixer_table().back() == entry);
  CHECK(to_string(entry->kind) == "uniform");
  ModelConfig c = test::small_model_config({.n_layers = 2, .layers = {MixerKind::NormAttention, entry->kind}});
  const nlohmann::json written = model_config_to_json(c);
  CHECK(written["layers"].dump() == R"(["norm_attention","uniform"])");
  CHECK(written["attention"].contains("uniform"));  // used, so written though the reference lacks it
  const ModelConfig read = model_config_from_json(written, "model");
  CHECK(read.layers == c.layers);
  CHECK(mixer_parameters(*entry, c) == 2.0 * (16.0 * 16.0 + 16.0));
  CHECK_THROWS_AS(add_mixer(*entry), std::invalid_argument);
}

TEST_CASE("mixer walkthrough: uniform attention is the mean of the visible rows' v, by hand") {
  // v and out the identity with zero biases: the output row t is the mean of x over the rows t
  // sees: 0..t in a decoder, every real row in an encoder.
  const int64_t T = 4, d = 4;
  for (Arch arch : {Arch::Decoder, Arch::Encoder}) {
    ModelConfig c = test::small_model_config({.arch = arch, .d_model = d, .n_heads = 2});
    ParamStore store;
    Rng rng(1);
    walkthrough::UniformAttention mixer(c, store, "m", rng);
    for (const auto& [name, var] : store.entries()) {
      std::fill_n(var->value.data(), var->value.numel(), 0.0f);
      if (name.find("weight") != std::string::npos)
        for (int64_t i = 0; i < d; ++i) var->value.data()[i * d + i] = 1.0f;
    }
    Tensor x = Tensor::zeros({1, T, d});
    for (int64_t i = 0; i < T * d; ++i) x.data()[i] = static_cast<float>(i % 7) - 2.0f;
    const std::vector<uint8_t> valid = {1, 1, 1, 0};  // the last row is padding
    Tape tape;
    ForwardContext ctx{tape, false, rng, nullptr};
    ctx.key_valid = &valid;
    const Var o = mixer.forward(ctx, make_var(x));
    for (int64_t t = 0; t < 3; ++t) {
      const int64_t last = arch == Arch::Decoder ? t : 2;
      for (int64_t j = 0; j < d; ++j) {
        double mean = 0;
        for (int64_t s = 0; s <= last; ++s) mean += x.data()[s * d + j];
        mean /= static_cast<double>(last + 1);
        CHECK(o->value.data()[t * d + j] == doctest::Approx(mean).epsilon(1e-6));
      }
    }
  }
}

TEST_CASE("mixer walkthrough: a model of the example holds at least the parameter floor its checkpoint is checked against") {
  // The Pathfinder shape with every layer uniform: v and out only, 2·(d² + d) a layer, below the
  // 3·d² of q, k and v the floor counts for the library's mixers.
  ModelConfig c = test::small_model_config({.arch = Arch::Encoder, .vocab_size = 256, .d_model = 128, .n_heads = 8,
                                             .n_layers = 4, .layers = std::vector<MixerKind>(4, find_mixer("uniform")->kind)});
  c.channel_mixer = {.type = ChannelMixerKind::FFN, .d_ff = 128, .activation = Activation::GELU};
  c.head = HeadKind::Classification;
  c.num_classes = 2;
  const TransNormerModel model(c, 1);
  int64_t held = 0;
  for (const auto& [name, var] : model.params().entries()) held += var->value.numel();
  CHECK(static_cast<long double>(held) >= parameter_floor(c));
}
