#pragma once
// cosFormer (Qin et al., ICLR 2022; paper.md §1.9; reference README item 9): q = relu(x W_q + b_q),
// k = relu(x W_k + b_k), re-weighted by cos(π(i−j)/2M) through q'_i = [q_i sin a_i, q_i cos a_i],
// a_i = (π/2)·i/M, i = 1..T, M = the sequence's own (real) length; o_i = num_i / max(den_i, eps);
// then W_o unless out_proj is false. No relative PE. Cost O(T·d_head²) per head (features 2·d_head).
#include "layers/attention/projections.h"
#include "layers/model_config.h"

namespace tn {

class CosFormer : public TokenMixer {
 public:
  CosFormer(const ModelConfig& config, const CosformerOptions& options, ParamStore& store,
            const std::string& prefix, Rng& rng);
  Var forward(ForwardContext& ctx, const Var& x) override;

 private:
  CosformerOptions options_;
  int64_t n_heads_;
  bool causal_;
  AttentionProjections proj_;
};

}  // namespace tn
