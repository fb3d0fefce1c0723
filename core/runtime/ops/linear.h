#pragma once
#include "core/runtime/autograd/tape.h"

namespace tn {

/// y = x Wᵀ + b (PyTorch Linear). x: [..., in], weight: [out, in], bias: [out] or null.
/// Returns [..., out]. Forward and backward are oneDNN matmuls (weight read as a transposed view).
/// With tape.bf16() the products run on bf16 copies: x's is shared through Tape::bf16_of (q, k
/// and v convert their common input once), W and dy are converted once each, and the weight
/// gradient reads dy transposed in place. Gradients are delivered by the products themselves
/// (overwrite, or the sum post-op), with no scratch. Throws ShapeError when x's last axis != in.
Var linear(Tape& tape, const Var& x, const Var& weight, const Var& bias);

}  // namespace tn
