#include "layers/mixers/glu.h"

#include "core/ops/elementwise.h"
#include "core/ops/eltwise.h"

namespace tn {

Var activate(ForwardContext& ctx, const Var& x, Activation activation) {
  switch (activation) {
    case Activation::SiLU: return eltwise(ctx.tape, x, Eltwise::Silu);
    case Activation::GELU: return eltwise(ctx.tape, x, Eltwise::Gelu);
    case Activation::ReLU: return eltwise(ctx.tape, x, Eltwise::Relu);
    case Activation::Identity: return x;
  }
  return x;
}

GLU::GLU(int64_t d_model, int64_t d_ff, Activation activation, ParamStore& store,
         const std::string& prefix, Rng& rng)
    : activation_(activation),
      w1_(make_linear(d_model, d_ff, store, prefix + ".w1", rng)),
      w2_(make_linear(d_model, d_ff, store, prefix + ".w2", rng)),
      w3_(make_linear(d_ff, d_model, store, prefix + ".w3", rng)) {}

Var GLU::forward(ForwardContext& ctx, const Var& x) {
  Var gate = activate(ctx, w1_.forward(ctx, x), activation_);
  return w3_.forward(ctx, mul(ctx.tape, gate, w2_.forward(ctx, x)));
}

FFN::FFN(int64_t d_model, int64_t d_ff, Activation activation, ParamStore& store,
         const std::string& prefix, Rng& rng)
    : activation_(activation),
      fc1_(make_linear(d_model, d_ff, store, prefix + ".fc1", rng)),
      fc2_(make_linear(d_ff, d_model, store, prefix + ".fc2", rng)) {}

Var FFN::forward(ForwardContext& ctx, const Var& x) {
  return fc2_.forward(ctx, activate(ctx, fc1_.forward(ctx, x), activation_));
}

}  // namespace tn
