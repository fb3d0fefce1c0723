#include "layers/attention/score_tap.h"
#include "layers/attention/performer.h"

#include <cmath>

#include "layers/attention/attention_ops.h"
#include "layers/attention/kernels/performer_features.h"
#include "layers/attention/linear_attention.h"
#include "layers/attention/linear_decode_state.h"

namespace tn {

Performer::Performer(const ModelConfig& config, const PerformerOptions& options, ParamStore& store,
                     const std::string& prefix, Rng& rng)
    : options_(options),
      n_heads_(config.n_heads),
      d_model_(config.d_model),
      causal_(config.causal()),
      proj_(config.d_model, store, prefix, 1.0 / std::sqrt(2.0), true, rng) {
  features_ = store.add_buffer(prefix + ".features", {config.n_heads, options.features, config.d_head()});
  const std::vector<float> drawn =
      performer_orthogonal_features(config.n_heads, options.features, config.d_head(), rng.next_u64());
  std::copy(drawn.begin(), drawn.end(), features_->value.data());
}

Var Performer::forward(ForwardContext& ctx, const Var& x) {
  const float feature_eps = static_cast<float>(options_.feature_eps);
  Var q = performer_features(ctx.tape, proj_.q.forward(ctx, x), n_heads_, features_, true, causal_,
                             feature_eps, ctx.key_valid);
  Var k = performer_features(ctx.tape, proj_.k.forward(ctx, x), n_heads_, features_, false, causal_,
                             feature_eps, ctx.key_valid);
  // Padded keys must add nothing: feature_eps makes their φ non-zero, so zero φ(k) and v there.
  k = mask_rows(ctx.tape, k, ctx.key_valid);
  Var v = mask_rows(ctx.tape, proj_.v.forward(ctx, x), ctx.key_valid);
  LinearAttentionOut terms =
      linear_attention(ctx.tape, q, k, v, n_heads_, causal_, LinearAttention::kChunk, true);
  Var o = divide_by_denominator(ctx.tape, terms.num, terms.den, static_cast<float>(options_.eps));
  if (ctx.score_probe)
    ctx.score_probe->record({ScoreTap::Form::Ratio, false, q, k, v, o, n_heads_, causal_, 0, ctx.key_valid});
  return proj_.project_out(ctx, o);
}

std::unique_ptr<DecodeState> Performer::start_decode() const {
  if (!causal_)
    throw ConfigError("[start_decode] performer in an encoder is bidirectional: only a decoder "
                      "(arch: decoder) decodes token by token");
  return std::make_unique<LinearDecodeState>(n_heads_, options_.features, d_model_ / n_heads_, true);
}

Var Performer::decode_step(ForwardContext& ctx, DecodeState& state, const Var& x,
                           int64_t position) {
  check_decode_row("Performer::decode_step", x, d_model_);
  auto& recurrent = decode_state_as<LinearDecodeState>(state, "Performer::decode_step");
  recurrent.advance("Performer::decode_step", position);
  const float feature_eps = static_cast<float>(options_.feature_eps);
  // Causal: the key stabiliser is 0 and the query's its own row max, so one row's φ is its own.
  Var q = performer_features(ctx.tape, proj_.q.forward(ctx, x), n_heads_, features_, true, true,
                             feature_eps, nullptr);
  Var k = performer_features(ctx.tape, proj_.k.forward(ctx, x), n_heads_, features_, false, true,
                             feature_eps, nullptr);
  Var v = proj_.v.forward(ctx, x);
  Var num = make_var(Tensor::empty(v->value.shape()));
  Var den = make_var(Tensor::empty({1, 1, n_heads_}));
  recurrent.step(q->value.data(), k->value.data(), v->value.data(), num->value.data(),
                 den->value.data());
  Var o = divide_by_denominator(ctx.tape, num, den, static_cast<float>(options_.eps));
  return proj_.project_out(ctx, o);
}

}  // namespace tn
