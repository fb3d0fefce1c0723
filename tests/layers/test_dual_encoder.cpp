// The dual encoder of LRA retrieval (docs/model.md §10): both documents through one encoder, mean
// pooled, [a, b, a⊙b, a−b] → Linear(4d, d) + GELU → Linear(d, 2). Gradients by finite differences
// through the whole model, the feature layout by hand, and padding invariance per document.
#include <doctest/doctest.h>

#include <cmath>

#include "core/autograd/grad_check.h"
#include "core/ops/cross_entropy.h"
#include "layers/models/transnormer.h"

using namespace tn;

namespace {
ModelConfig dual_config() {
  ModelConfig c;
  c.arch = Arch::Encoder;
  c.vocab_size = 30;
  c.d_model = 8;
  c.n_heads = 2;
  c.n_layers = 2;
  c.layers = {MixerKind::Diag, MixerKind::NormAttention};
  c.attention.diag.block_size = 4;
  c.channel_mixer.d_ff = 16;
  c.dropout = 0.0;
  c.head = HeadKind::Retrieval;
  c.num_classes = 2;
  return c;
}
}  // namespace

TEST_CASE("dual encoder: finite-difference gradients of the retrieval loss") {
  TransNormerModel model(dual_config(), 1);
  const std::vector<int32_t> a = {3, 7, 9, 12, 4, 5, 6, 1, 2, 8, 11, 13};  // 2 docs of 6
  const std::vector<int32_t> b = {14, 15, 16, 17, 18, 19, 20, 21, 22, 23};  // 2 docs of 5
  std::vector<Var> inputs;
  for (const auto& [name, var] : model.params().parameters())
    if (name.find("urpe.theta") == std::string::npos && name != "embed_tokens.weight")
      inputs.push_back(var);
  Rng rng(0);
  auto res = grad_check(
      [&](Tape& tape) {
        ForwardContext ctx{tape, false, rng, nullptr};
        Var ha = model.forward(ctx, a, 2, 6);
        Var hb = model.forward(ctx, b, 2, 5);
        return cross_entropy(tape, model.retrieve(ctx, ha, nullptr, hb, nullptr), {1, 0}).loss;
      },
      inputs, 1e-2, 6, 5e-2);
  INFO(res.worst);
  CHECK(res.max_rel_error < 5e-2);
}

TEST_CASE("dual encoder: a padded document gives the logits of the document alone") {
  TransNormerModel model(dual_config(), 2);
  Tape tape;
  tape.set_enabled(false);
  Rng rng(0);
  ForwardContext plain{tape, false, rng, nullptr};
  const std::vector<int32_t> a = {3, 7, 9, 12, 4}, b = {14, 15, 16};
  const Tensor alone = model.retrieve(plain, model.forward(plain, a, 1, 5), nullptr,
                                      model.forward(plain, b, 1, 3), nullptr)->value.clone();
  const std::vector<int32_t> a_pad = {3, 7, 9, 12, 4, 0, 0}, b_pad = {14, 15, 16, 29, 28, 27};
  const std::vector<uint8_t> valid_a = {1, 1, 1, 1, 1, 0, 0}, valid_b = {1, 1, 1, 0, 0, 0};
  ForwardContext ctx_a{tape, false, rng, &valid_a}, ctx_b{tape, false, rng, &valid_b};
  Var ha = model.forward(ctx_a, a_pad, 1, 7);
  Var hb = model.forward(ctx_b, b_pad, 1, 6);
  const Tensor padded = model.retrieve(plain, ha, &valid_a, hb, &valid_b)->value;
  for (int i = 0; i < 2; ++i) CHECK(padded.data()[i] == doctest::Approx(alone.data()[i]).epsilon(1e-5));
}
