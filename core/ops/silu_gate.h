#pragma once
// The gated product of a SiLU GLU (SwiGLU; Shazeer 2020, "GLU Variants Improve Transformer"):
// y = silu(a) ⊙ b in one pass, and its backward in one pass, instead of an activation, a product
// and two element-wise backwards, each a sweep through memory.
#include <cstdint>

#include "core/autograd/tape.h"

namespace tn {

/// y = silu(a) ⊙ b = a·σ(a)·b, elementwise; a and b of one shape (any). silu(a) is not kept: the
/// backward recomputes σ(a) while it reads a, b and dy once and writes da = dy·b·σ(a)(1 + a(1 −
/// σ(a))) and db = dy·silu(a). σ goes through exp of −|a| (core/math/fast_exp.h, ~2 ulp), so it
/// is finite for every finite a. Throws ShapeError when the shapes differ.
Var silu_gate(Tape& tape, const Var& a, const Var& b);

/// Raw forward on n floats: y = silu(a)·b (y may not overlap a or b; a may equal b).
void silu_gate_forward(const float* a, const float* b, float* y, int64_t n);
/// Raw backward on n floats: da = dy·b·silu'(a), db = dy·silu(a) (both overwritten; da and db
/// may not overlap each other or the inputs).
void silu_gate_backward(const float* a, const float* b, const float* dy, float* da, float* db,
                        int64_t n);

}  // namespace tn
