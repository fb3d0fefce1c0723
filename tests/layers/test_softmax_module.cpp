// The softmax attention module on a bf16 tape: the projections run in bf16 and the attention core
// (row tiles, no T×T matrix) in f32, so outputs and gradients stay within bf16 rounding of the f32
// module, across two row tiles, right padding and attention dropout with the same key.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "core/runtime/autograd/grad_check.h"
#include "layers/attention/softmax_attention.h"
#include "tests/layers/small_model.h"
#include "tests/rel_l2.h"

using namespace tn;

TEST_CASE("softmax attention module in bf16: within bf16 rounding of f32, tiles, padding, dropout") {
  // n = 300: row tiles of 256 and 44 (kernels/full_attention.cpp), batch 1 padded after 270 keys.
  ModelConfig c = test::small_model_config({.d_model = 32, .n_heads = 2, .layers = {MixerKind::Softmax}});
  c.n_layers = 1;
  c.attention_dropout = 0.1;
  const int64_t B = 2, T = 300;
  ParamStore store;
  Rng init(5);
  SoftmaxAttention mixer(c, store, "attn", init);
  Rng data(6);
  Tensor xt = Tensor::empty({B, T, c.d_model}), rt = Tensor::empty({B, T, c.d_model});
  for (int64_t i = 0; i < xt.numel(); ++i) {
    xt.data()[i] = static_cast<float>(data.normal());
    rt.data()[i] = static_cast<float>(data.normal());
  }
  std::vector<uint8_t> valid(size_t(B * T), 1);
  for (int64_t t = 270; t < T; ++t) valid[size_t(T + t)] = 0;
  Var x = make_var(xt, true);
  auto run = [&](bool bf16) {
    x->grad() = Tensor();
    for (const auto& [name, var] : store.parameters()) var->grad() = Tensor();
    Tape tape;
    tape.set_bf16(bf16);
    Rng dropout(7);  // the same mask keys in both precisions
    ForwardContext ctx{tape, true, dropout, &valid};
    Var y = mixer.forward(ctx, x);
    tape.backward(weighted_sum(tape, y, rt));
    return std::vector<std::vector<float>>{y->value.to_vector(), x->grad().to_vector(),
                                           store.parameters().front().second->grad().to_vector()};
  };
  const auto f32 = run(false);
  const auto bf = run(true);
  for (size_t i = 0; i < f32.size(); ++i) {
    INFO("output, dx, first weight's gradient: " << i);
    const double rel = test::rel_l2(bf[i].data(), f32[i].data(), int64_t(f32[i].size()));
    CHECK(rel < 2e-2);  // bf16 operands of the projections: 8 significant bits
    CHECK(rel > 1e-6);  // and they really ran in bf16
  }
  for (const auto& v : f32)
    for (float e : v) REQUIRE(std::isfinite(e));
}
