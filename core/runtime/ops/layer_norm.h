#pragma once
#include "core/runtime/autograd/tape.h"

namespace tn {

/// LayerNorm over the last axis (fairseq/PyTorch: biased variance, eps 1e-5):
/// y = (x − mean) / √(var + eps) ⊙ weight + bias. x: [..., d]; weight, bias: [d] (either may be null).
Var layer_norm(Tape& tape, const Var& x, const Var& weight, const Var& bias, float eps = 1e-5f);

}  // namespace tn
