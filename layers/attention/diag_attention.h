#pragma once
// DiagAttention (paper.md §1.3; reference README item 7): attention only inside non-overlapping
// blocks of block_size positions. q = (x W_q + b_q)/√d_head, relative PE with positions counted
// from each block's start, A = ReLU(q kᵀ) (T1) or softmax (T2) with future and padded keys masked,
// heads concatenated, optional norm over d (srmsnorm for T1), then W_o. Cost O(T·block·d).
#include <optional>

#include "layers/attention/kernels/diag_attention.h"
#include "layers/attention/projections.h"
#include "layers/model_config.h"
#include "layers/norms/norm.h"
#include "layers/positional/relative_encoding.h"

namespace tn {

class DiagAttention : public TokenMixer {
 public:
  DiagAttention(const ModelConfig& config, const DiagOptions& options, ParamStore& store,
                const std::string& prefix, Rng& rng);
  Var forward(ForwardContext& ctx, const Var& x) override;

 private:
  DiagOptions options_;
  int64_t n_heads_, d_head_;
  bool causal_;
  float attention_dropout_;
  AttentionProjections proj_;
  RelativeEncoding relative_;
  Norm norm_;
};

}  // namespace tn
