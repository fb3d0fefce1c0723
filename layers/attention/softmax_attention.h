#pragma once
// Vanilla attention (Vaswani et al. 2017; docs/model.md §8): softmax(q kᵀ/√d_head + M) v, relative
// PE on q and k, heads concatenated, then W_o. O(T²) time and memory: the baseline.
// Decoding (causal only): a KvCache of every k, v row so far, O(t·d) time and memory at token t.
#include "layers/attention/projections.h"
#include "layers/config/model_config.h"
#include "layers/positional/relative_encoding.h"

namespace tn {

class SoftmaxAttention : public TokenMixer {
 public:
  SoftmaxAttention(const ModelConfig& config, ParamStore& store, const std::string& prefix, Rng& rng);
  Var forward(ForwardContext& ctx, const Var& x) override;
  /// Causal only: an empty KvCache (ConfigError for an encoder).
  std::unique_ptr<DecodeState> start_decode() const override;
  /// x [1, 1, d] at `position` → [1, 1, d]: q, k at the absolute position, appends k, v, softmax
  /// over every cached key, then W_o.
  Var decode_step(ForwardContext& ctx, DecodeState& state, const Var& x, int64_t position) override;

 private:
  int64_t n_heads_, d_head_, d_model_;
  bool causal_;
  float attention_dropout_;
  AttentionProjections proj_;
  RelativeEncoding relative_;
};

}  // namespace tn
