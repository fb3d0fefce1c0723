#pragma once
// Channel mixers (docs/model.md §9): GLU(x) = w3( act(w1 x) ⊙ (w2 x) ) with act = SiLU by default,
// the SiLU one a single op (core/runtime/ops/swiglu.h);
// FFN(x) = fc2( act(fc1 x) ) with exact GELU by default. All Linear layers have biases and
// PyTorch-default init.
#include "layers/attention/projections.h"
#include "layers/config/model_config.h"

namespace tn {

class GLU : public ChannelMixer {
 public:
  GLU(int64_t d_model, int64_t d_ff, Activation activation, ParamStore& store,
      const std::string& prefix, Rng& rng);
  Var forward(ForwardContext& ctx, const Var& x) override;

 private:
  Activation activation_;
  Projection w1_, w2_, w3_;
};

class FFN : public ChannelMixer {
 public:
  FFN(int64_t d_model, int64_t d_ff, Activation activation, ParamStore& store,
      const std::string& prefix, Rng& rng);
  Var forward(ForwardContext& ctx, const Var& x) override;

 private:
  Activation activation_;
  Projection fc1_, fc2_;
};

/// The eltwise op for a channel-mixer activation.
Var activate(ForwardContext& ctx, const Var& x, Activation activation);

}  // namespace tn
