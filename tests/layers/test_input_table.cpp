// The model's inputs (layers/inputs/input_table.h): the pixel input Linear(1 → d) over
// (level − mean) / std by hand, its gradients by finite differences through a whole model, the
// config keys it adds (and that token models do not write), and its parameter count.
#include <doctest/doctest.h>

#include <cmath>

#include "core/runtime/autograd/grad_check.h"
#include "core/platform/config/json_section.h"
#include "core/error.h"
#include "core/runtime/ops/cross_entropy.h"
#include "layers/inputs/input_table.h"
#include "layers/config/model_config_json.h"
#include "layers/models/transnormer.h"
#include "tests/layers/small_model.h"

using namespace tn;

namespace {
/// A small pixel classifier: 256 levels, Linear(1 → 8), T1 layers, last-position pooling.
ModelConfig pixel_config() {
  ModelConfig c = test::small_model_config({.arch = Arch::Encoder, .vocab_size = 256, .d_model = 8,
                                             .layers = {MixerKind::Diag, MixerKind::NormAttention}, .block_size = 4});
  c.embed_scale = false;
  c.head = HeadKind::Classification;
  c.pooling = Pooling::Last;
  c.num_classes = 2;
  c.input = {InputKind::Linear, 127.5, 127.5};  // Pathfinder's Normalize(0.5, 0.5)
  return c;
}
}  // namespace

TEST_CASE("input linear: x = W (level - mean) / std + b, by hand") {
  ModelConfig c = pixel_config();
  ParamStore store;
  Rng rng(3);
  auto input = input_entry(InputKind::Linear).make(c, store, rng);
  CHECK(input->tied_weight() == nullptr);
  const auto params = store.parameters();  // by name
  REQUIRE(params.size() == 2);
  REQUIRE(params[0].first == "embed_input.bias");
  REQUIRE(params[1].first == "embed_input.weight");
  const Tensor& b = params[0].second->value;  // [8]
  const Tensor& w = params[1].second->value;  // [8, 1]
  CHECK(w.shape() == Shape{8, 1});
  Tape tape;
  ForwardContext ctx{tape, false, rng, nullptr};
  // Levels 0, 255, 128: values −1, 1, 0.5/127.5; the third position scaled by s = 2.
  const Var x = input->forward(ctx, {0, 255, 128}, 1, 3, 2.0f);
  REQUIRE(x->value.shape() == std::vector<int64_t>{1, 3, 8});
  const double values[3] = {-1.0, 1.0, 0.5 / 127.5};
  for (int t = 0; t < 3; ++t)
    for (int j = 0; j < 8; ++j)
      CHECK(x->value.data()[t * 8 + j] == doctest::Approx(2.0 * (w.data()[j] * values[t] + b.data()[j])).epsilon(1e-6));
  CHECK_THROWS_WITH_AS(input->forward(ctx, {256}, 1, 1, 1.0f), doctest::Contains("level 256"), ShapeError);
}

TEST_CASE("input linear: finite-difference gradients of a pixel classifier, its input weights included") {
  TransNormerModel model(pixel_config(), 2);
  std::vector<Var> inputs;
  for (const auto& [name, var] : model.params().parameters())
    if (name.rfind("embed_input.", 0) == 0 || name.rfind("head.", 0) == 0) inputs.push_back(var);
  REQUIRE(inputs.size() >= 3);
  const std::vector<int32_t> pixels = {0, 30, 255, 128, 77, 200, 13, 90, 255, 255, 0, 0, 60, 61, 62, 63};
  Rng rng(0);
  auto res = grad_check(
      [&](Tape& tape) {
        ForwardContext ctx{tape, false, rng, nullptr};
        return cross_entropy(tape, model.classify(ctx, model.forward(ctx, pixels, 2, 8)), {1, 0}).loss;
      },
      inputs, 1e-2, 8, 5e-2);
  INFO(res.worst);
  CHECK(res.max_rel_error < 5e-2);
}

TEST_CASE("input: model.input round-trips, token models write no input key, a tied LM head is refused") {
  const nlohmann::json pixel = {{"vocab_size", 256}, {"d_model", 16}, {"n_heads", 4}, {"arch", "encoder"},
                                {"head", "classification"},
                                {"input", {{"kind", "linear"}, {"mean", 122.6}, {"std", 61.0}}}};
  const ModelConfig c = model_config_from_json(pixel, "spec.yaml");
  CHECK(c.input.kind == InputKind::Linear);
  CHECK(c.input.mean == 122.6);
  CHECK(c.input.std == 61.0);
  const nlohmann::json written = model_config_to_json(c);
  CHECK(written["input"]["kind"] == "linear");
  CHECK(model_config_from_json(written, "checkpoint") == c);
  const ModelConfig tokens = model_config_from_json({{"vocab_size", 100}, {"d_model", 16}, {"n_heads", 4}}, "spec.yaml");
  CHECK_FALSE(model_config_to_json(tokens).contains("input"));  // the reference's keys exactly

  nlohmann::json lm = pixel;
  lm["head"] = "mlm";
  CHECK_THROWS_WITH_AS(model_config_from_json(lm, "spec.yaml"), doctest::Contains("tie_embeddings: false"), ConfigError);
  lm["tie_embeddings"] = false;
  CHECK_NOTHROW(model_config_from_json(lm, "spec.yaml"));
  nlohmann::json bad = pixel;
  bad["input"]["std"] = 0;
  CHECK_THROWS_WITH_AS(model_config_from_json(bad, "spec.yaml"), doctest::Contains("model.input.std"), ConfigError);
  bad = pixel;
  bad["input"]["std"] = 1e39;  // 1/std is 0 in float32
  CHECK_THROWS_WITH_AS(model_config_from_json(bad, "spec.yaml"), doctest::Contains("[1e-6, 1e6]"), ConfigError);
  bad = pixel;
  bad["attention"] = {{"diag", {{"n_heads", 3}}}};  // 16 is not split by 3
  CHECK_THROWS_WITH_AS(model_config_from_json(bad, "spec.yaml"), doctest::Contains("model.attention.diag.n_heads"),
                       ConfigError);
  bad = pixel;
  bad["input"]["kind"] = "pixels";
  CHECK_THROWS_WITH_AS(model_config_from_json(bad, "spec.yaml"), doctest::Contains("linear"), ConfigError);
}

TEST_CASE("input linear: 2·d parameters in place of the embedding") {
  ModelConfig c = pixel_config();
  TransNormerModel pixel(c, 0);
  c.input = {};
  TransNormerModel tokens(c, 0);
  const auto n_pixel = static_cast<double>(pixel.params().parameter_count());
  const auto n_tokens = static_cast<double>(tokens.params().parameter_count());
  CHECK(n_tokens - n_pixel == 256 * 8 - 2 * 8);
  CHECK(input_entry(InputKind::Linear).parameters(pixel_config()) == 2 * 8);
  CHECK(input_entry(InputKind::Tokens).parameters(c) == 256 * 8);
}
