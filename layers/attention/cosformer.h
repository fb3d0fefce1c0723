#pragma once
// cosFormer (Qin et al., ICLR 2022; docs/model.md §8): q = relu(x W_q + b_q),
// k = relu(x W_k + b_k), re-weighted by cos(π(i−j)/2M) through q'_i = [q_i sin a_i, q_i cos a_i],
// a_i = (π/2)·i/M, i = 1..T, M = the sequence's own (real) length; o_i = num_i / max(den_i, eps);
// then W_o unless out_proj is false. No relative PE. Cost O(T·d_head²) per head (features 2·d_head).
// No incremental form: M is the length of the sequence, so every earlier row's re-weighting
// changes when a token is added, and so do the outputs of every later
// layer. start_decode() refuses; TransNormerModel::decode_step instead recomputes the whole model
// over the prefix at each step (correct, O(t) per token).
#include "layers/attention/projections.h"
#include "layers/config/model_config.h"

namespace tn {

class CosFormer : public TokenMixer {
 public:
  CosFormer(const ModelConfig& config, const CosformerOptions& options, ParamStore& store,
            const std::string& prefix, Rng& rng);
  Var forward(ForwardContext& ctx, const Var& x) override;
  /// Always throws ConfigError: there is no incremental form (see above).
  std::unique_ptr<DecodeState> start_decode() const override;

 private:
  CosformerOptions options_;
  int64_t n_heads_;
  bool causal_;
  AttentionProjections proj_;
};

}  // namespace tn
