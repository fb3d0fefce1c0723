// The memory floor: the parameter estimate tracks the real models, and a run that cannot fit is
// refused with the numbers.
#include <doctest/doctest.h>

#include "core/error.h"
#include "core/platform/system.h"
#include "experiments/runner/memory_check.h"
#include "layers/models/transnormer.h"

using namespace tn;

TEST_CASE("memory check: estimated parameters within 2 % of the built models") {
  ModelConfig t1;  // the quickstart's shape: 4 layers, d 128, 2 diag + 2 norm_attention, vocab 17488
  t1.vocab_size = 17488;
  t1.d_model = 128;
  t1.n_heads = 4;
  t1.n_layers = 4;
  t1.layers = {MixerKind::Diag, MixerKind::Diag, MixerKind::NormAttention, MixerKind::NormAttention};
  t1.channel_mixer.d_ff = 8 * 128 / 3;
  ModelConfig encoder = t1;  // untied, learned positions, FFN, MLM head
  encoder.arch = Arch::Encoder;
  encoder.head = HeadKind::MLM;
  encoder.tie_embeddings = false;
  encoder.positional = Positional::Learned;
  encoder.norm = NormKind::LayerNorm;
  encoder.channel_mixer = {ChannelMixerKind::FFN, 512, Activation::GELU};
  ModelConfig classifier = t1;
  classifier.arch = Arch::Encoder;
  classifier.head = HeadKind::Classification;
  classifier.num_classes = 3;
  ModelConfig pixels = classifier;  // LRA Image: Linear(1 -> d) over 256 levels, its own diag heads
  pixels.vocab_size = 256;
  pixels.input = {InputKind::Linear, 122.6, 61.0};
  pixels.attention.diag.n_heads = 2;
  ModelConfig parallel = t1;  // Diag and NormAttention in every layer: twice the token-mixing parameters
  parallel.layers.assign(static_cast<size_t>(parallel.n_layers), MixerKind::DiagNormParallel);
  for (const ModelConfig& c : {t1, encoder, classifier, pixels, parallel}) {
    const double actual = static_cast<double>(TransNormerModel(c, 0).params().parameter_count());
    CHECK(estimate_parameter_count(c) == doctest::Approx(actual).epsilon(0.02));
  }
  const double t1_params = static_cast<double>(TransNormerModel(t1, 0).params().parameter_count());
  const MemoryEstimate e = estimate_training_memory(t1, 8 * 256);
  CHECK(e.weight_bytes == doctest::Approx(16.0 * t1_params).epsilon(0.02));
  // Per layer and position 8·d + 2·d_ff floats, plus a 512-row logits chunk, plus the batch held
  // (12 bytes a position and 1 KiB).
  CHECK(e.activation_bytes ==
        doctest::Approx(4.0 * (2048.0 * (8 * 128 + 2 * 341) * 4 + 512.0 * 17488) + 12.0 * 2048 + 1024.0));
}

TEST_CASE("memory check: softmax attention adds its B·H·n·2 row statistics per softmax layer") {
  ModelConfig c;
  c.vocab_size = 100;
  c.d_model = 32;
  c.n_heads = 4;
  c.n_layers = 3;
  c.layers = {MixerKind::Softmax, MixerKind::NormAttention, MixerKind::Softmax};
  c.channel_mixer.d_ff = 64;
  const MemoryEstimate without = estimate_training_memory(c, 8 * 500);
  const MemoryEstimate with = estimate_training_memory(c, 8 * 500, 500);
  // Two softmax layers, 8 sequences of 500, 4 heads, 2 floats (max, 1/sum) per query row: 2 · 8 · 4 ·
  // 500 · 2 floats of 4 bytes (no n x n matrix).
  CHECK(with.activation_bytes - without.activation_bytes == doctest::Approx(4.0 * 2 * 8 * 4 * 500.0 * 2.0));
  CHECK(with.weight_bytes == without.weight_bytes);
  c.layers = {MixerKind::NormAttention, MixerKind::NormAttention, MixerKind::NormAttention};  // nothing more
  CHECK(estimate_training_memory(c, 8 * 500, 500).activation_bytes == estimate_training_memory(c, 8 * 500).activation_bytes);
}

TEST_CASE("memory check: a model or batch beyond the machine is refused with the sizes") {
  REQUIRE(physical_memory_bytes() > 1e8);
  ModelConfig huge;
  huge.vocab_size = 17488;
  huge.d_model = 100000000;
  huge.n_heads = 4;
  huge.channel_mixer.d_ff = 8 * huge.d_model / 3;
  const MemoryEstimate e = estimate_training_memory(huge, 2048);
  CHECK(e.total_bytes() > physical_memory_bytes());
  CHECK_THROWS_WITH_AS(check_fits_in_memory(e, "spec.yaml"),
                       doctest::Contains("spec.yaml: the run needs at least"), ConfigError);
  ModelConfig small;
  small.vocab_size = 100;
  small.d_model = 32;
  small.n_heads = 2;
  small.channel_mixer.d_ff = 64;
  CHECK_NOTHROW(check_fits_in_memory(estimate_training_memory(small, 2048), "spec.yaml"));
  CHECK_THROWS_AS(check_fits_in_memory(estimate_training_memory(small, int64_t{1} << 40), "spec.yaml"), ConfigError);
}
