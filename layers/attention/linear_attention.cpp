#include "layers/attention/score_tap.h"
#include "layers/attention/linear_attention.h"

#include <cmath>

#include "core/runtime/ops/eltwise.h"
#include "layers/attention/attention_ops.h"
#include "layers/attention/linear_decode_state.h"

namespace tn {
namespace {
Eltwise phi_of(Kernel kernel) {
  switch (kernel) {
    case Kernel::OnePlusElu: return Eltwise::OnePlusElu;
    case Kernel::Elu: return Eltwise::Elu;
    case Kernel::Relu: return Eltwise::Relu;
  }
  return Eltwise::Identity;
}
}  // namespace

LinearAttention::LinearAttention(const ModelConfig& config, const LinearOptions& options,
                                 ParamStore& store, const std::string& prefix, Rng& rng)
    : options_(options),
      n_heads_(config.n_heads),
      d_model_(config.d_model),
      causal_(config.causal()),
      proj_(config.d_model, store, prefix, 1.0 / std::sqrt(2.0), true, rng),
      relative_(config.relative, config.n_heads, config.d_head(), store, prefix, rng) {
  if (!options.scaling) norm_.emplace(options.norm, config.d_model, store, prefix + ".norm");
}

Var LinearAttention::forward(ForwardContext& ctx, const Var& x) {
  const Eltwise phi = phi_of(options_.kernel);
  Var q = relative_.apply(ctx, eltwise(ctx.tape, proj_.q.forward(ctx, x), phi));
  Var k = relative_.apply(ctx, eltwise(ctx.tape, proj_.k.forward(ctx, x), phi));
  Var v = proj_.v.forward(ctx, x);
  k = mask_rows(ctx.tape, k, ctx.key_valid);
  v = mask_rows(ctx.tape, v, ctx.key_valid);
  LinearAttentionOut terms =
      linear_attention(ctx.tape, q, k, v, n_heads_, causal_, kChunk, options_.scaling);
  Var o = options_.scaling
              ? divide_by_denominator(ctx.tape, terms.num, terms.den, static_cast<float>(options_.eps))
              : norm_->forward(ctx, terms.num);
  if (ctx.score_probe)
    ctx.score_probe->record({options_.scaling ? ScoreTap::Form::Ratio : ScoreTap::Form::Direct, false, q, k, v,
                             options_.scaling ? o : terms.num, n_heads_, causal_, 0, ctx.key_valid, static_cast<float>(options_.eps)});
  return proj_.project_out(ctx, o);
}

std::unique_ptr<DecodeState> LinearAttention::start_decode() const {
  if (!causal_)
    throw ConfigError("[start_decode] linear attention in an encoder is bidirectional: only a "
                      "decoder (arch: decoder) decodes token by token");
  const int64_t d_head = d_model_ / n_heads_;
  return std::make_unique<LinearDecodeState>(n_heads_, d_head, d_head, options_.scaling);
}

Var LinearAttention::decode_step(ForwardContext& ctx, DecodeState& state, const Var& x,
                                 int64_t position) {
  check_decode_row("LinearAttention::decode_step", x, d_model_);
  auto& recurrent = decode_state_as<LinearDecodeState>(state, "LinearAttention::decode_step");
  recurrent.advance("LinearAttention::decode_step", position);
  const Eltwise phi = phi_of(options_.kernel);
  Var q = relative_.apply(ctx, eltwise(ctx.tape, proj_.q.forward(ctx, x), phi), 0, position);
  Var k = relative_.apply(ctx, eltwise(ctx.tape, proj_.k.forward(ctx, x), phi), 0, position);
  Var v = proj_.v.forward(ctx, x);
  Var num = make_var(Tensor::empty(v->value.shape()));
  Var den = options_.scaling ? make_var(Tensor::empty({1, 1, n_heads_})) : nullptr;
  recurrent.step(q->value.data(), k->value.data(), v->value.data(), num->value.data(),
                 den ? den->value.data() : nullptr);
  Var o = options_.scaling
              ? divide_by_denominator(ctx.tape, num, den, static_cast<float>(options_.eps))
              : norm_->forward(ctx, num);
  return proj_.project_out(ctx, o);
}

}  // namespace tn
