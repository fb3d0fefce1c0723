#pragma once
#include "core/runtime/autograd/tape.h"
#include "core/runtime/ops/eltwise.h"

namespace tn {

/// y = f(a) Wᵀ + b: an activation, then a Linear (the second half of an FFN: fc2(f(fc1 x))),
/// as one op that keeps only `a` for the backward. f(a) ([..., in], the FFN's widest tensor after
/// a) lives only during the forward and is recomputed in the backward, where the weight gradient
/// needs it: the same numbers as eltwise then linear (docs/model.md §5), with one tensor of
/// in floats per position fewer held between the forward and the backward, for one more eltwise
/// pass. a: [..., in], weight: [out, in], bias: [out] or null; returns [..., out]. f32 products
/// only: on a bf16 tape it runs eltwise then linear. Throws ShapeError when a's last axis != in.
Var activation_linear(Tape& tape, const Var& a, Eltwise f, const Var& weight, const Var& bias);

}  // namespace tn
