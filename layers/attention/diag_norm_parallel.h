#pragma once
// DiagAttention and NormAttention side by side in one layer, their outputs summed (the paper's
// Table 12, "parallel"; docs/attention.md): y = Diag(x) + Norm(x), each branch with its own
// projections, relative encoding and norm, under `<prefix>.diag` and `<prefix>.norm`, built from
// the mixer table with the `attention.diag` and `attention.norm_attention` options. About twice the
// token-mixing parameters and FLOPs of either branch. Decoding keeps both branches' states.
#include <memory>

#include "layers/config/model_config.h"
#include "layers/module/module.h"
#include "layers/module/param_store.h"

namespace tn {

class DiagNormParallel : public TokenMixer {
 public:
  DiagNormParallel(const ModelConfig& config, ParamStore& store, const std::string& prefix, Rng& rng);
  /// x [batch, seq_len, d_model] → Diag(x) + Norm(x), same shape. Both branches report their score
  /// taps (if ctx.score_probe is set) under this layer.
  Var forward(ForwardContext& ctx, const Var& x) override;
  /// Causal only: both branches' states (a block KV cache and a recurrent kv_state).
  std::unique_ptr<DecodeState> start_decode() const override;
  /// x [1, 1, d] at `position` → Diag.decode_step + Norm.decode_step, [1, 1, d].
  Var decode_step(ForwardContext& ctx, DecodeState& state, const Var& x, int64_t position) override;

 private:
  std::unique_ptr<TokenMixer> diag_, norm_;
};

}  // namespace tn
