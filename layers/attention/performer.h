#pragma once
// Performer / FAVOR+ (Choromanski et al., ICLR 2021; docs/model.md §8):
// φ(x)_r = m^(−1/2)·exp((c x)·w_r − c²‖x‖²/2 − s) + feature_eps with c = d_head^(−1/4) and fixed
// orthogonal random features w ("<prefix>.features" [H, m, d_head], a buffer saved in checkpoints so
// a reloaded model reproduces its outputs); o_i = num_i / max(den_i, eps); then W_o. No relative PE.
// Cost O(T·m·d_head) per head, causal in the chunked form.
// Decoding (causal only): decoder keys use stabiliser 0 and queries their own row max, so φ of a
// row depends on that row alone and the recurrent form applies: a LinearDecodeState with d_key = m
// (kv_state m×d_head and k_sum m per head), O(m·d) per token whatever the position.
#include "layers/attention/projections.h"
#include "layers/config/model_config.h"

namespace tn {

class Performer : public TokenMixer {
 public:
  Performer(const ModelConfig& config, const PerformerOptions& options, ParamStore& store,
            const std::string& prefix, Rng& rng);
  Var forward(ForwardContext& ctx, const Var& x) override;
  /// Causal only: a LinearDecodeState over the m features (ConfigError for an encoder, whose key
  /// stabiliser is a maximum over the whole sequence).
  std::unique_ptr<DecodeState> start_decode() const override;
  /// x [1, 1, d] at `position` → [1, 1, d]: φ(q), φ(k) of the row, num and den from the state
  /// after adding φ(k)ᵀ v, o = num / max(den, eps), then W_o.
  Var decode_step(ForwardContext& ctx, DecodeState& state, const Var& x, int64_t position) override;

 private:
  PerformerOptions options_;
  int64_t n_heads_, d_model_;
  bool causal_;
  AttentionProjections proj_;
  Var features_;
};

}  // namespace tn
