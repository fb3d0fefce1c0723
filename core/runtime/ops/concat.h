#pragma once
#include <vector>

#include "core/runtime/autograd/tape.h"

namespace tn {

/// Concatenation along the last axis: inputs [..., d_i] with equal leading shapes → [..., Σ d_i].
/// Throws ShapeError when the leading shapes differ.
Var concat_last(Tape& tape, const std::vector<Var>& inputs);

}  // namespace tn
