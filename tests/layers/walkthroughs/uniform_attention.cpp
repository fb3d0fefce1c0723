#include "tests/layers/walkthroughs/uniform_attention.h"

#include <algorithm>

#include "layers/attention/attention_ops.h"

namespace tn::walkthrough {

UniformAttention::UniformAttention(const ModelConfig& config, ParamStore& store, const std::string& prefix,
                                   Rng& rng)
    : n_heads_(config.n_heads),
      causal_(config.causal()),
      v_(make_linear(config.d_model, config.d_model, store, prefix + ".v_proj", rng)),
      out_(make_linear(config.d_model, config.d_model, store, prefix + ".out_proj", rng)) {}

Var UniformAttention::forward(ForwardContext& ctx, const Var& x) {
  const int64_t B = x->value.dim(0), T = x->value.dim(1);
  Tensor ones = Tensor::zeros({B, T, n_heads_});  // one feature per head: q·k = 1
  std::fill_n(ones.data(), ones.numel(), 1.0f);
  const Var q = make_var(std::move(ones));
  const Var k = mask_rows(ctx.tape, q, ctx.key_valid);  // padded keys count for nothing
  const Var v = mask_rows(ctx.tape, v_.forward(ctx, x), ctx.key_valid);
  const LinearAttentionOut terms = linear_attention(ctx.tape, q, k, v, n_heads_, causal_, kChunk, true);
  return out_.forward(ctx, divide_by_denominator(ctx.tape, terms.num, terms.den, 1e-6f));
}

}  // namespace tn::walkthrough
