#include "layers/attention/score_tap.h"
#include "layers/attention/softmax_attention.h"

#include <cmath>

#include "core/runtime/ops/elementwise.h"
#include "layers/attention/attention_ops.h"
#include "layers/attention/kv_cache.h"

namespace tn {

SoftmaxAttention::SoftmaxAttention(const ModelConfig& config, ParamStore& store,
                                   const std::string& prefix, Rng& rng)
    : n_heads_(config.n_heads),
      d_head_(config.d_head()),
      d_model_(config.d_model),
      causal_(config.causal()),
      attention_dropout_(static_cast<float>(config.attention_dropout)),
      proj_(config.d_model, store, prefix, 1.0 / std::sqrt(2.0), true, rng),
      relative_(config.relative, config.n_heads, config.d_head(), store, prefix, rng) {}

Var SoftmaxAttention::forward(ForwardContext& ctx, const Var& x) {
  Var q = scale(ctx.tape, proj_.q.forward(ctx, x), 1.0f / std::sqrt(static_cast<float>(d_head_)));
  q = relative_.apply(ctx, q);
  Var k = relative_.apply(ctx, proj_.k.forward(ctx, x));
  Var v = proj_.v.forward(ctx, x);
  // Attention dropout on P (nn.Dropout in the reference), training only: a fresh mask key per forward.
  const float p = ctx.training ? attention_dropout_ : 0.0f;
  const uint64_t key = p > 0.0f ? ctx.rng.key() : 0;
  Var o = softmax_attention(ctx.tape, q, k, v, n_heads_, causal_, ctx.key_valid, p, key);
  if (ctx.score_probe)
    ctx.score_probe->record({ScoreTap::Form::Softmax, false, q, k, v, o, n_heads_, causal_, 0, ctx.key_valid});
  return proj_.project_out(ctx, o);
}

std::unique_ptr<DecodeState> SoftmaxAttention::start_decode() const {
  if (!causal_)
    throw ConfigError("[start_decode] softmax attention in an encoder is bidirectional: only a "
                      "decoder (arch: decoder) decodes token by token");
  return std::make_unique<KvCache>(n_heads_, d_head_, 0);
}

Var SoftmaxAttention::decode_step(ForwardContext& ctx, DecodeState& state, const Var& x,
                                  int64_t position) {
  check_decode_row("SoftmaxAttention::decode_step", x, d_model_);
  auto& cache = decode_state_as<KvCache>(state, "SoftmaxAttention::decode_step");
  cache.advance("SoftmaxAttention::decode_step", position);
  Var q = scale(ctx.tape, proj_.q.forward(ctx, x), 1.0f / std::sqrt(static_cast<float>(d_head_)));
  q = relative_.apply(ctx, q, 0, position);
  Var k = relative_.apply(ctx, proj_.k.forward(ctx, x), 0, position);
  Var v = proj_.v.forward(ctx, x);
  cache.append(k->value.data(), v->value.data());
  Var o = make_var(Tensor::empty(x->value.shape()));
  cache.attend(q->value.data(), DiagInnerKind::Softmax, o->value.data());
  return proj_.project_out(ctx, o);
}

}  // namespace tn
