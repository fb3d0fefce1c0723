#pragma once
// Vanilla attention (paper.md §1.9; reference README item 5): softmax(q kᵀ/√d_head + M) v, relative
// PE on q and k, heads concatenated, then W_o. O(T²) time and memory: the baseline.
#include "layers/attention/projections.h"
#include "layers/model_config.h"
#include "layers/positional/relative_encoding.h"

namespace tn {

class SoftmaxAttention : public TokenMixer {
 public:
  SoftmaxAttention(const ModelConfig& config, ParamStore& store, const std::string& prefix, Rng& rng);
  Var forward(ForwardContext& ctx, const Var& x) override;

 private:
  int64_t n_heads_, d_head_;
  bool causal_;
  float attention_dropout_;
  AttentionProjections proj_;
  RelativeEncoding relative_;
};

}  // namespace tn
