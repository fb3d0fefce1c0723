#pragma once
// The SiLU GLU channel mixer (SwiGLU; Shazeer 2020, "GLU Variants Improve Transformer") as one op:
// y = (silu(x W1ᵀ + b1) ⊙ (x W2ᵀ + b2)) W3ᵀ + b3, so that on a bf16 tape its hidden tensors are
// written in bf16 by the passes that make them instead of being converted after them.
#include "core/runtime/autograd/tape.h"

namespace tn {

/// The three Linears of a SwiGLU: w1 and w2 [d_ff, d], w3 [d, d_ff]; each bias may be null.
struct SwiGluWeights {
  Var w1, b1, w2, b2, w3, b3;
};

/// x: [..., d] → [..., d], the same numbers as the linear, gate and linear ops it replaced (the
/// same products and gate kernel, in the same order: bit for bit in f32 and, subnormals flushed as
/// oneDNN's reorder flushes them, in bf16; docs/performance.md). It keeps x W1ᵀ + b1 and
/// x W2ᵀ + b2 (f32, [rows, d_ff]) and the gated product for the backward. On a bf16 tape the gated product is written in bf16 only (the
/// f32 one is never read: its one reader is the W3 product), and the backward writes the
/// gradients of the two branches in bf16 only, with the bias gradients summed in the same pass
/// (silu_gate_backward_rows): about 1 GB of memory traffic less per ALM step than converting
/// them (docs/performance.md). Throws ShapeError when a weight is missing or the shapes do not
/// chain.
Var swiglu(Tape& tape, const Var& x, const SwiGluWeights& w);

}  // namespace tn
