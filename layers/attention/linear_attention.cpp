#include "layers/attention/linear_attention.h"

#include <cmath>

#include "core/ops/eltwise.h"
#include "layers/attention/attention_ops.h"

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
  return proj_.project_out(ctx, o);
}

}  // namespace tn
