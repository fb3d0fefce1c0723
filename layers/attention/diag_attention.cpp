#include "layers/attention/score_tap.h"
#include "layers/attention/diag_attention.h"

#include <cmath>

#include "core/error.h"
#include "core/runtime/ops/elementwise.h"
#include "layers/attention/attention_ops.h"
#include "layers/attention/kv_cache.h"

namespace tn {

int64_t diag_heads(const ModelConfig& config, const DiagOptions& options) {
  const int64_t heads = options.n_heads > 0 ? options.n_heads : config.n_heads;
  if (config.d_model % heads != 0 || (config.relative != Relative::None && (config.d_model / heads) % 2 != 0))
    throw ConfigError("model.attention.diag.n_heads: " + std::to_string(heads) + " heads of d_model " +
                      std::to_string(config.d_model) + " leave a head width of " + std::to_string(config.d_model / heads) +
                      (config.d_model % heads ? " and a remainder" : " (odd, but relative positions rotate pairs)") +
                      "; choose a head count dividing d_model into even widths");
  return heads;
}

DiagAttention::DiagAttention(const ModelConfig& config, const DiagOptions& options,
                             ParamStore& store, const std::string& prefix, Rng& rng)
    : options_(options),
      n_heads_(diag_heads(config, options)),
      d_head_(config.d_model / n_heads_),
      d_model_(config.d_model),
      causal_(config.causal()),
      attention_dropout_(static_cast<float>(config.attention_dropout)),
      proj_(config.d_model, store, prefix, 1.0, true, rng),
      relative_(config.relative, n_heads_, d_head_, store, prefix, rng),
      norm_(options.norm, config.d_model, store, prefix + ".norm") {}

Var DiagAttention::forward(ForwardContext& ctx, const Var& x) {
  const int64_t block = options_.block_size;
  Var q = scale(ctx.tape, proj_.q.forward(ctx, x), 1.0f / std::sqrt(static_cast<float>(d_head_)));
  q = relative_.apply(ctx, q, block);
  Var k = relative_.apply(ctx, proj_.k.forward(ctx, x), block);
  Var v = proj_.v.forward(ctx, x);
  const DiagInnerKind inner =
      options_.inner == DiagInner::Relu ? DiagInnerKind::Relu : DiagInnerKind::Softmax;
  // Attention dropout on A (nn.Dropout in the reference), training only: a fresh mask key per forward.
  const float p = ctx.training ? attention_dropout_ : 0.0f;
  const uint64_t key = p > 0.0f ? ctx.rng.key() : 0;
  Var o = diag_attention(ctx.tape, q, k, v, n_heads_, block, inner, causal_, ctx.key_valid, p, key);
  if (ctx.score_probe)
    ctx.score_probe->record({inner == DiagInnerKind::Relu ? ScoreTap::Form::Direct : ScoreTap::Form::Softmax,
                             inner == DiagInnerKind::Relu, q, k, v, o, n_heads_, causal_, block, ctx.key_valid});
  return proj_.project_out(ctx, norm_.forward(ctx, o));
}

std::unique_ptr<DecodeState> DiagAttention::start_decode() const {
  if (!causal_)
    throw ConfigError("[start_decode] diag attention in an encoder is bidirectional: only a "
                      "decoder (arch: decoder) decodes token by token");
  return std::make_unique<KvCache>(n_heads_, d_head_, options_.block_size);
}

Var DiagAttention::decode_step(ForwardContext& ctx, DecodeState& state, const Var& x,
                               int64_t position) {
  check_decode_row("DiagAttention::decode_step", x, d_model_);
  auto& cache = decode_state_as<KvCache>(state, "DiagAttention::decode_step");
  cache.advance("DiagAttention::decode_step", position);
  const int64_t block = options_.block_size;
  if (position % block == 0) cache.clear();  // a new block: no attention across blocks
  Var q = scale(ctx.tape, proj_.q.forward(ctx, x), 1.0f / std::sqrt(static_cast<float>(d_head_)));
  q = relative_.apply(ctx, q, block, position);
  Var k = relative_.apply(ctx, proj_.k.forward(ctx, x), block, position);
  Var v = proj_.v.forward(ctx, x);
  cache.append(k->value.data(), v->value.data());
  Var o = make_var(Tensor::empty(x->value.shape()));
  const DiagInnerKind inner =
      options_.inner == DiagInner::Relu ? DiagInnerKind::Relu : DiagInnerKind::Softmax;
  cache.attend(q->value.data(), inner, o->value.data());
  return proj_.project_out(ctx, norm_.forward(ctx, o));
}

}  // namespace tn
