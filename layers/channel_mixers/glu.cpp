#include "layers/channel_mixers/glu.h"

#include "core/runtime/ops/elementwise.h"
#include "core/runtime/ops/activation_linear.h"
#include "core/runtime/ops/eltwise.h"
#include "core/runtime/ops/swiglu.h"

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
  if (activation_ == Activation::SiLU)  // SwiGLU: one op (core/runtime/ops/swiglu.h)
    return swiglu(ctx.tape, x, {w1_.weight, w1_.bias, w2_.weight, w2_.bias, w3_.weight, w3_.bias});
  Var gate = activate(ctx, w1_.forward(ctx, x), activation_);
  return w3_.forward(ctx, mul(ctx.tape, gate, w2_.forward(ctx, x)));
}

FFN::FFN(int64_t d_model, int64_t d_ff, Activation activation, ParamStore& store,
         const std::string& prefix, Rng& rng)
    : activation_(activation),
      fc1_(make_linear(d_model, d_ff, store, prefix + ".fc1", rng)),
      fc2_(make_linear(d_ff, d_model, store, prefix + ".fc2", rng)) {}

Var FFN::forward(ForwardContext& ctx, const Var& x) {
  const Var hidden = fc1_.forward(ctx, x);
  // fc2(f(hidden)) as one op: f(hidden), d_ff floats per position, is recomputed in the backward
  // rather than held (core/runtime/ops/activation_linear.h).
  switch (activation_) {
    case Activation::SiLU: return activation_linear(ctx.tape, hidden, Eltwise::Silu, fc2_.weight, fc2_.bias);
    case Activation::GELU: return activation_linear(ctx.tape, hidden, Eltwise::Gelu, fc2_.weight, fc2_.bias);
    case Activation::ReLU: return activation_linear(ctx.tape, hidden, Eltwise::Relu, fc2_.weight, fc2_.bias);
    case Activation::Identity: break;
  }
  return fc2_.forward(ctx, hidden);
}

}  // namespace tn
