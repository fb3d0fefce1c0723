#include "layers/attention/score_tap.h"
#include "layers/attention/cosformer.h"

#include <cmath>

#include "core/error.h"
#include "layers/attention/attention_ops.h"
#include "layers/attention/linear_attention.h"

namespace tn {

CosFormer::CosFormer(const ModelConfig& config, const CosformerOptions& options, ParamStore& store,
                     const std::string& prefix, Rng& rng)
    : options_(options),
      n_heads_(config.n_heads),
      causal_(config.causal()),
      proj_(config.d_model, store, prefix, 1.0 / std::sqrt(2.0), options.out_proj, rng) {}

Var CosFormer::forward(ForwardContext& ctx, const Var& x) {
  Var q = cosformer_features(ctx.tape, proj_.q.forward(ctx, x), n_heads_, ctx.key_valid);
  Var k = cosformer_features(ctx.tape, proj_.k.forward(ctx, x), n_heads_, ctx.key_valid);
  Var v = mask_rows(ctx.tape, proj_.v.forward(ctx, x), ctx.key_valid);
  LinearAttentionOut terms =
      linear_attention(ctx.tape, q, k, v, n_heads_, causal_, LinearAttention::kChunk, true);
  Var o = divide_by_denominator(ctx.tape, terms.num, terms.den, static_cast<float>(options_.eps));
  if (ctx.score_probe)
    ctx.score_probe->record({ScoreTap::Form::Ratio, false, q, k, v, o, n_heads_, causal_, 0, ctx.key_valid});
  return proj_.project_out(ctx, o);
}

std::unique_ptr<DecodeState> CosFormer::start_decode() const {
  throw ConfigError("[start_decode] cosformer has no incremental form: its re-weighting uses the "
                    "sequence's total length M, so adding a token changes every earlier output; "
                    "decode the whole model by recomputing the prefix (TransNormerModel does)");
}

}  // namespace tn
