#pragma once
// Kernel linear attention and NormAttention (paper §3–4; docs/model.md §6):
// q = R(φ(x W_q + b_q)), k = R(φ(x W_k + b_k)), v = x W_v + b_v, no 1/√d_head;
// num_i = Σ_{j(≤i)} (q_i·k_j) v_j, den_i = Σ_{j(≤i)} q_i·k_j;
// scaling: o = num / max(den, eps) per head (classic linear attention);
// otherwise o = Norm(concat_heads(num)) over the full width d (NormAttention: srmsnorm for T1/T2).
// Then W_o. Causal form chunked: O(T·C·d_head + T·d_head²) per head (chunk C = 64), no T×T buffer.
// Padded keys (ctx.key_valid) are zeroed.
// Decoding (causal only): the recurrent form, a LinearDecodeState per sequence (kv_state
// d_head×d_head and k_sum d_head per head), O(d·d_head) per token whatever the position.
#include <memory>
#include <optional>

#include "layers/attention/projections.h"
#include "layers/config/model_config.h"
#include "layers/norms/norm.h"
#include "layers/positional/relative_encoding.h"

namespace tn {

class LinearAttention : public TokenMixer {
 public:
  /// `options` as for `linear`; NormAttention passes {kernel, scaling=false, norm}.
  LinearAttention(const ModelConfig& config, const LinearOptions& options, ParamStore& store,
                  const std::string& prefix, Rng& rng);
  Var forward(ForwardContext& ctx, const Var& x) override;
  /// Causal only: a LinearDecodeState (ConfigError for an encoder).
  std::unique_ptr<DecodeState> start_decode() const override;
  /// x [1, 1, d] at `position` → [1, 1, d]: q, k at the absolute position (relative PE), then
  /// num = q·kv_state (and den = q·k_sum) after adding k_tᵀ v_t, then the same scaling or norm and
  /// W_o as forward().
  Var decode_step(ForwardContext& ctx, DecodeState& state, const Var& x, int64_t position) override;

  static constexpr int64_t kChunk = 64;

 private:
  LinearOptions options_;
  int64_t n_heads_, d_model_;
  bool causal_;
  AttentionProjections proj_;
  RelativeEncoding relative_;
  std::optional<Norm> norm_;
};

}  // namespace tn
