#pragma once
// Performer / FAVOR+ (Choromanski et al., ICLR 2021; paper.md §1.9; reference README item 8):
// φ(x)_r = m^(−1/2)·exp((c x)·w_r − c²‖x‖²/2 − s) + feature_eps with c = d_head^(−1/4) and fixed
// orthogonal random features w ("<prefix>.features" [H, m, d_head], a buffer saved in checkpoints so
// a reloaded model reproduces its outputs); o_i = num_i / max(den_i, eps); then W_o. No relative PE.
// Cost O(T·m·d_head) per head, causal in the chunked form.
#include "layers/attention/projections.h"
#include "layers/model_config.h"

namespace tn {

class Performer : public TokenMixer {
 public:
  Performer(const ModelConfig& config, const PerformerOptions& options, ParamStore& store,
            const std::string& prefix, Rng& rng);
  Var forward(ForwardContext& ctx, const Var& x) override;

 private:
  PerformerOptions options_;
  int64_t n_heads_;
  bool causal_;
  AttentionProjections proj_;
  Var features_;
};

}  // namespace tn
