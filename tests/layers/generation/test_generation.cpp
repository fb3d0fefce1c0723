// Sampling and generation (layers/generation/): greedy is the argmax and deterministic, a seeded
// sample is reproducible, top-k keeps the k most likely tokens, the sampler's frequencies follow
// softmax(logits / temperature), and generate() continues a prompt through decode_step.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "layers/generation/generate.h"
#include "layers/generation/sampler.h"
#include "tests/layers/small_model.h"

using namespace tn;

namespace {

TransNormerModel tiny_t1(uint64_t seed) {
  return TransNormerModel(test::small_model_config({.arch = Arch::Decoder,
                                                    .layers = {MixerKind::Diag, MixerKind::NormAttention},
                                                    .block_size = 8}),
                          seed);
}

}  // namespace

TEST_CASE("sample_token: greedy, top-k, frequencies, bad options") {
  const std::vector<float> logits = {0.5f, 2.0f, -1.0f, 2.0f, 1.0f};
  Rng rng(1);
  CHECK(sample_token(logits.data(), 5, {0.0, 0}, rng) == 1);  // argmax, lowest id on ties
  CHECK(sample_token(logits.data(), 5, {0.0, 3}, rng) == 1);
  for (int i = 0; i < 50; ++i) CHECK(sample_token(logits.data(), 5, {1.0, 1}, rng) == 1);
  std::set<int32_t> seen;
  for (int i = 0; i < 2000; ++i) seen.insert(sample_token(logits.data(), 5, {5.0, 3}, rng));
  CHECK(seen == std::set<int32_t>{1, 3, 4});  // the three largest logits only

  // Frequencies at temperature 2 follow softmax(logits / 2).
  const int draws = 40000;
  std::vector<int> counts(5, 0);
  for (int i = 0; i < draws; ++i) ++counts[size_t(sample_token(logits.data(), 5, {2.0, 0}, rng))];
  double total = 0.0;
  for (float l : logits) total += std::exp(l / 2.0);
  for (size_t v = 0; v < 5; ++v) {
    CAPTURE(v);
    CHECK(double(counts[v]) / draws == doctest::Approx(std::exp(logits[v] / 2.0) / total).epsilon(0.05));
  }

  CHECK_THROWS_AS(sample_token(logits.data(), 5, {-0.1, 0}, rng), ConfigError);
  CHECK_THROWS_AS(sample_token(logits.data(), 5, {NAN, 0}, rng), ConfigError);
  CHECK_THROWS_AS(sample_token(logits.data(), 5, {1.0, -1}, rng), ConfigError);
}

TEST_CASE("generate: greedy follows the forward's argmax and is deterministic, seeds reproduce") {
  TransNormerModel model = tiny_t1(9);
  const std::vector<int32_t> prompt = {1, 5, 9, 13};
  GenerationOptions greedy;
  greedy.max_new_tokens = 30;  // crosses several diag blocks of 8
  greedy.sampling.temperature = 0.0;
  std::vector<int32_t> streamed;
  const GenerationResult a = generate(model, prompt, greedy, [&](int32_t id) { streamed.push_back(id); });
  const GenerationResult b = generate(model, prompt, greedy);
  REQUIRE(a.ids.size() == 30);
  CHECK(a.ids == b.ids);
  CHECK(streamed == a.ids);
  CHECK(a.step_ms.size() == prompt.size() + 30);
  CHECK(a.ms_per_token() > 0.0);

  // Each greedy token is the argmax of the whole-sequence forward over prompt + tokens so far.
  Tape tape;
  tape.set_enabled(false);
  Rng rng(0);
  ForwardContext ctx{tape, false, rng, nullptr};
  std::vector<int32_t> sequence = prompt;
  sequence.insert(sequence.end(), a.ids.begin(), a.ids.end());
  const int64_t n = static_cast<int64_t>(sequence.size());
  const Var hidden = model.forward(ctx, sequence, 1, n);
  for (size_t i = 0; i < a.ids.size(); ++i) {
    const int64_t row = static_cast<int64_t>(prompt.size() + i) - 1;
    const Tensor logits = model.token_logits(ctx, hidden, {row});
    const int32_t argmax =
        static_cast<int32_t>(std::max_element(logits.data(), logits.data() + 40) - logits.data());
    CAPTURE(i);
    CHECK(a.ids[i] == argmax);
  }

  GenerationOptions sampled;
  sampled.max_new_tokens = 25;
  sampled.sampling = {1.0, 10};
  sampled.seed = 42;
  const GenerationResult s1 = generate(model, prompt, sampled);
  const GenerationResult s2 = generate(model, prompt, sampled);
  CHECK(s1.ids == s2.ids);
  sampled.seed = 43;
  CHECK(generate(model, prompt, sampled).ids != s1.ids);

  GenerationOptions none;
  none.max_new_tokens = 0;
  CHECK(generate(model, prompt, none).ids.empty());
  none.max_new_tokens = -1;
  CHECK_THROWS_AS(generate(model, prompt, none), ConfigError);
  CHECK_THROWS_AS(generate(model, {}, greedy), ShapeError);
}

TEST_CASE("generate: more new tokens than learned positions is refused before anything is allocated") {
  // Issue 20, defect 4: --max-new-tokens 100000000000 reserved room for every step up front and
  // died in std::bad_alloc. With learned positions the model can take max_positions tokens.
  ModelConfig c =
      test::small_model_config({.arch = Arch::Decoder, .n_layers = 1, .layers = {MixerKind::NormAttention}});
  c.positional = Positional::Learned;
  c.max_positions = 16;
  TransNormerModel model(c, 3);
  GenerationOptions options;
  options.sampling.temperature = 0.0;
  options.max_new_tokens = 100000000000;
  try {
    generate(model, {1, 2, 3}, options);
    FAIL("100,000,000,000 new tokens were accepted");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("ask for at most 13 new tokens") != std::string::npos);
  }
  options.max_new_tokens = 13;  // exactly up to the last position
  CHECK(generate(model, {1, 2, 3}, options).ids.size() == 13);
}

TEST_CASE("generate: the new tokens are bounded where positions never end, without overflowing their total") {
  // Sinusoidal positions have no last one: 2^63 - 1 new tokens overflowed prompt + max_new_tokens
  // and ended in std::length_error from vector::reserve.
  TransNormerModel model = tiny_t1(3);
  GenerationOptions options;
  options.sampling.temperature = 0.0;
  options.max_new_tokens = INT64_MAX;
  try {
    generate(model, {1, 2, 3}, options);
    FAIL("2^63 - 1 new tokens were accepted");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("is more than the 1048576 tokens one call generates") != std::string::npos);
  }
  options.max_new_tokens = kMaxNewTokens + 1;
  CHECK_THROWS_AS(generate(model, {1, 2, 3}, options), ConfigError);
  CHECK_NOTHROW(check_max_new_tokens(kMaxNewTokens));
  options.max_new_tokens = 4;
  CHECK(generate(model, {1, 2, 3}, options).ids.size() == 4);
}
