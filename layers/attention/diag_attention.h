#pragma once
// DiagAttention (paper §4; docs/model.md §7): attention only inside non-overlapping
// blocks of block_size positions. q = (x W_q + b_q)/√d_head, relative PE with positions counted
// from each block's start, A = ReLU(q kᵀ) (T1) or softmax (T2) with future and padded keys masked,
// heads concatenated (the model's n_heads, or the mixer's own), optional norm over d (srmsnorm
// for T1), then W_o. Cost O(T·block·d).
// Decoding (causal only): a KvCache of the current block's k, v rows (at most block_size rows,
// cleared at each block start), O(block·d) per token whatever the position.
#include <optional>

#include "layers/attention/kernels/diag_attention.h"
#include "layers/attention/projections.h"
#include "layers/config/model_config.h"
#include "layers/norms/norm.h"
#include "layers/positional/relative_encoding.h"

namespace tn {

/// The head count DiagAttention uses: options.n_heads, else the model's. Throws ConfigError
/// (model.attention.diag.n_heads) when it does not divide d_model, or leaves relative positions
/// an odd head width.
int64_t diag_heads(const ModelConfig& config, const DiagOptions& options);

class DiagAttention : public TokenMixer {
 public:
  DiagAttention(const ModelConfig& config, const DiagOptions& options, ParamStore& store,
                const std::string& prefix, Rng& rng);
  Var forward(ForwardContext& ctx, const Var& x) override;
  /// Causal only: a KvCache reserving block_size rows (ConfigError for an encoder).
  std::unique_ptr<DecodeState> start_decode() const override;
  /// x [1, 1, d] at `position` → [1, 1, d]: clears the cache when position is a multiple of
  /// block_size, encodes q, k at position mod block_size, appends k, v, attends over the block so
  /// far (relu or softmax), then the same norm and W_o as forward().
  Var decode_step(ForwardContext& ctx, DecodeState& state, const Var& x, int64_t position) override;

 private:
  DiagOptions options_;
  int64_t n_heads_, d_head_, d_model_;
  bool causal_;
  float attention_dropout_;
  AttentionProjections proj_;
  RelativeEncoding relative_;
  Norm norm_;
};

}  // namespace tn
