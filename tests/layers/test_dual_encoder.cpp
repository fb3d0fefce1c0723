// The dual encoder of LRA retrieval (docs/model.md §10): both documents through one encoder, mean
// pooled, [a, b, a−b, a⊙b] → Linear(4d, d) + GELU → Linear(d, 2). Gradients by finite differences
// through the whole model, the feature layout by hand, and padding invariance per document.
#include <doctest/doctest.h>

#include <cmath>
#include <map>

#include "core/runtime/autograd/grad_check.h"
#include "core/error.h"
#include "core/runtime/ops/cross_entropy.h"
#include "layers/models/transnormer.h"
#include "tests/layers/small_model.h"

using namespace tn;

namespace {
ModelConfig dual_config() {
  ModelConfig c = test::small_model_config({.arch = Arch::Encoder, .vocab_size = 30, .d_model = 8,
                                             .layers = {MixerKind::Diag, MixerKind::NormAttention}, .block_size = 4});
  c.head = HeadKind::Retrieval;
  c.num_classes = 2;
  return c;
}
}  // namespace

TEST_CASE("dual encoder: finite-difference gradients of the retrieval loss") {
  TransNormerModel model(dual_config(), 1);
  // 2 pairs of 6-token documents: rows 0-1 the first documents, rows 2-3 the second ones.
  const std::vector<int32_t> docs = {3, 7, 9, 12, 4, 5, 6, 1, 2, 8, 11, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25};
  std::vector<Var> inputs;
  for (const auto& [name, var] : model.params().parameters())
    if (name.find("urpe.theta") == std::string::npos && name != "embed_tokens.weight")
      inputs.push_back(var);
  Rng rng(0);
  auto res = grad_check(
      [&](Tape& tape) {
        ForwardContext ctx{tape, false, rng, nullptr};
        return cross_entropy(tape, model.retrieve(ctx, model.forward(ctx, docs, 4, 6), nullptr), {1, 0}).loss;
      },
      inputs, 1e-2, 6, 5e-2);
  INFO(res.worst);
  CHECK(res.max_rel_error < 5e-2);
}

TEST_CASE("dual encoder: padded documents give the logits of the documents alone") {
  TransNormerModel model(dual_config(), 2);
  Tape tape;
  tape.set_enabled(false);
  Rng rng(0);
  ForwardContext plain{tape, false, rng, nullptr};
  // One pair of 4-token documents, unpadded; then the same pair padded to 7 with junk ids.
  const std::vector<int32_t> pair = {3, 7, 9, 12, 14, 15, 16, 17};
  const Tensor alone = model.retrieve(plain, model.forward(plain, pair, 2, 4), nullptr)->value.clone();
  const std::vector<int32_t> padded_ids = {3, 7, 9, 12, 0, 0, 0, 14, 15, 16, 17, 29, 28, 27};
  const std::vector<uint8_t> valid = {1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0};
  ForwardContext ctx{tape, false, rng, &valid};
  const Tensor padded = model.retrieve(ctx, model.forward(ctx, padded_ids, 2, 7), &valid)->value;
  for (int i = 0; i < 2; ++i) CHECK(padded.data()[i] == doctest::Approx(alone.data()[i]).epsilon(1e-5));
}

TEST_CASE("dual encoder: logits = out_proj(GELU(dense([a, b, a - b, a * b]))) by hand") {
  TransNormerModel model(dual_config(), 3);
  Tape tape;
  tape.set_enabled(false);
  Rng rng(0);
  ForwardContext ctx{tape, false, rng, nullptr};
  const std::vector<int32_t> pair = {3, 7, 9, 14, 15, 16};  // one pair of 3-token documents
  const Tensor hidden = model.forward(ctx, pair, 2, 3)->value.clone();
  const Tensor logits = model.retrieve(ctx, model.forward(ctx, pair, 2, 3), nullptr)->value.clone();
  const int64_t d = 8;
  std::vector<double> a(d, 0.0), b(d, 0.0);
  for (int64_t t = 0; t < 3; ++t)
    for (int64_t k = 0; k < d; ++k) {
      a[k] += hidden.data()[t * d + k] / 3.0;
      b[k] += hidden.data()[(3 + t) * d + k] / 3.0;
    }
  std::vector<double> features;
  for (int64_t k = 0; k < d; ++k) features.push_back(a[k]);
  for (int64_t k = 0; k < d; ++k) features.push_back(b[k]);
  for (int64_t k = 0; k < d; ++k) features.push_back(a[k] - b[k]);
  for (int64_t k = 0; k < d; ++k) features.push_back(a[k] * b[k]);
  std::map<std::string, Tensor> p;
  for (const auto& [name, var] : model.params().parameters()) p[name] = var->value;
  const float* w1 = p.at("head.dense.weight").data();  // [d, 4d]
  const float* b1 = p.at("head.dense.bias").data();
  const float* w2 = p.at("head.out_proj.weight").data();  // [2, d]
  const float* b2 = p.at("head.out_proj.bias").data();
  std::vector<double> h(d);
  for (int64_t i = 0; i < d; ++i) {
    double z = b1[i];
    for (int64_t j = 0; j < 4 * d; ++j) z += w1[i * 4 * d + j] * features[j];
    h[i] = 0.5 * z * (1.0 + std::erf(z / std::sqrt(2.0)));
  }
  for (int64_t c = 0; c < 2; ++c) {
    double z = b2[c];
    for (int64_t i = 0; i < d; ++i) z += w2[c * d + i] * h[i];
    CHECK(logits.data()[c] == doctest::Approx(z).epsilon(1e-4));
  }
  CHECK_THROWS_AS(model.retrieve(ctx, model.forward(ctx, std::vector<int32_t>{3, 7, 9}, 1, 3), nullptr), ShapeError);
}
