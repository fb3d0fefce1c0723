#pragma once
#include "core/autograd/tape.h"

namespace tn {

/// y = x Wᵀ + b (PyTorch Linear). x: [..., in], weight: [out, in], bias: [out] or null.
/// Returns [..., out]. Forward and backward are oneDNN matmuls (weight read as a transposed view).
/// Throws ShapeError when x's last axis != in.
Var linear(Tape& tape, const Var& x, const Var& weight, const Var& bias);

}  // namespace tn
