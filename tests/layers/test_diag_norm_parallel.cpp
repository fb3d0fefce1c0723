// diag_norm_parallel (the paper's Table 12, "parallel"): its output is exactly DiagAttention's plus
// NormAttention's on the same input, with the same weights built separately; its parameters are the
// two branches', under `.diag` and `.norm`; its decoding state holds both. (Causality, padding,
// finite differences and decoding against the full forward are the table-driven tests'.)
#include <doctest/doctest.h>

#include "layers/module/registry.h"
#include "tests/layers/small_model.h"

using namespace tn;

namespace {

ModelConfig small_config() { return test::small_model_config({.vocab_size = 30, .n_layers = 1, .block_size = 4}); }

Var random_input(int64_t batch, int64_t seq_len, int64_t d_model) {
  Rng rng(5);
  Tensor t = Tensor::empty({batch, seq_len, d_model});
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<float>(rng.normal());
  return make_var(t, false);
}

}  // namespace

TEST_CASE("diag_norm_parallel: y = Diag(x) + Norm(x), with the branches' own parameters") {
  const ModelConfig c = small_config();
  ParamStore both_store, diag_store, norm_store;
  Rng rng_both(17), rng_apart(17);  // the branches draw their weights in the same order
  auto both = make_token_mixer(c, MixerKind::DiagNormParallel, both_store, "m", rng_both);
  auto diag = make_token_mixer(c, MixerKind::Diag, diag_store, "m.diag", rng_apart);
  auto norm = make_token_mixer(c, MixerKind::NormAttention, norm_store, "m.norm", rng_apart);

  CHECK(both_store.parameter_count() == diag_store.parameter_count() + norm_store.parameter_count());
  for (const auto& param : both_store.parameters()) {
    const std::string& name = param.first;
    INFO(name);
    CHECK((name.rfind("m.diag.", 0) == 0 || name.rfind("m.norm.", 0) == 0));
  }

  Tape tape;
  tape.set_enabled(false);
  Rng rng(0);
  ForwardContext ctx{tape, false, rng, nullptr};
  const Var x = random_input(2, 11, c.d_model);  // 11: two whole blocks of 4 and a partial one
  const Tensor y = both->forward(ctx, x)->value;
  const Tensor d = diag->forward(ctx, x)->value;
  const Tensor n = norm->forward(ctx, x)->value;
  REQUIRE(y.numel() == d.numel());
  float worst = 0;
  for (int64_t i = 0; i < y.numel(); ++i) worst = std::max(worst, std::abs(y.data()[i] - (d.data()[i] + n.data()[i])));
  CHECK(worst == 0.0f);  // one addition of the same two tensors
}

TEST_CASE("diag_norm_parallel: decoding keeps both branches' states and refuses positions out of order") {
  const ModelConfig c = small_config();
  ParamStore store;
  Rng init(3);
  auto mixer = make_token_mixer(c, MixerKind::DiagNormParallel, store, "m", init);
  auto state = mixer->start_decode();
  Tape tape;
  tape.set_enabled(false);
  Rng rng(0);
  ForwardContext ctx{tape, false, rng, nullptr};
  const Var row = random_input(1, 1, c.d_model);
  // The branches built apart, each with its own state, after the same step: the parallel state
  // holds exactly both (the block cache and the kv_state), neither more nor less.
  ParamStore diag_store, norm_store;
  Rng apart(3);
  auto diag = make_token_mixer(c, MixerKind::Diag, diag_store, "m.diag", apart);
  auto norm = make_token_mixer(c, MixerKind::NormAttention, norm_store, "m.norm", apart);
  auto diag_state = diag->start_decode();
  auto norm_state = norm->start_decode();
  mixer->decode_step(ctx, *state, row, 0);
  diag->decode_step(ctx, *diag_state, row, 0);
  norm->decode_step(ctx, *norm_state, row, 0);
  CHECK(state->next_position() == 1);
  CHECK(diag_state->size_bytes() > 0);
  CHECK(norm_state->size_bytes() > 0);
  CHECK(state->size_bytes() == diag_state->size_bytes() + norm_state->size_bytes());
  CHECK_THROWS_AS(mixer->decode_step(ctx, *state, row, 5), ShapeError);
}
