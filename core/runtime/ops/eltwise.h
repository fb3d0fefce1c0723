#pragma once
#include "core/runtime/autograd/tape.h"

namespace tn {

/// Pointwise functions, computed by oneDNN eltwise primitives (forward and backward).
/// OnePlusElu is 1 + elu(x) (the T2 kernel φ, docs/model.md §6); Gelu is the exact erf form.
enum class Eltwise { Elu, OnePlusElu, Relu, Silu, Gelu, Tanh, Identity };

/// y = f(x), any shape. ReLU'(0) = 0, as in PyTorch.
Var eltwise(Tape& tape, const Var& x, Eltwise kind);

/// Raw forward on n floats (used by kernels and tests): y = f(x).
void eltwise_forward(Eltwise kind, const float* x, float* y, int64_t n);
/// Raw backward: dx = f'(x) * dy (overwrites dx).
void eltwise_backward(Eltwise kind, const float* x, const float* dy, float* dx, int64_t n);

/// Whether f' can be read off the output y = f(x): ReLU, ELU and 1 + ELU. Their backward then
/// holds y and lets x go.
bool derivative_from_output(Eltwise kind);
/// Raw backward from the output: dx = f'(x) * dy with f'(x) computed from y = f(x) (overwrites
/// dx). Throws ShapeError for a kind where derivative_from_output is false.
void eltwise_backward_from_output(Eltwise kind, const float* y, const float* dy, float* dx, int64_t n);

}  // namespace tn
