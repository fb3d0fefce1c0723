#pragma once
#include "core/runtime/autograd/tape.h"

namespace tn {

/// SRMSNorm (docs/model.md §3): y = x / (‖x‖₂/√d + eps) over the last axis (width d), eps = 1e-8
/// outside the root, no parameters. With `weight` [d] non-null it is RMSNorm: y = weight ⊙ (…).
/// x: [..., d]; returns the same shape. A zero row maps to zero. On a bf16 tape the output's bf16
/// copy is written in the same pass and given to the tape (Tape::offer_bf16) for the products it
/// feeds.
Var rms_norm(Tape& tape, const Var& x, const Var& weight, float eps = 1e-8f);

}  // namespace tn
