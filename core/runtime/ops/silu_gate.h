#pragma once
// The gated product of a SiLU GLU (SwiGLU; Shazeer 2020, "GLU Variants Improve Transformer"):
// y = silu(a) ⊙ b = a·σ(a)·b in one pass, and its backward in one pass (core/runtime/ops/swiglu.h), instead
// of an activation, a product and two element-wise backwards, each a sweep through memory.
// silu(a) is not kept: the backward recomputes σ(a) while it reads a, b and dy once and writes
// da = dy·b·σ(a)(1 + a(1 − σ(a))) and db = dy·silu(a). σ goes through exp of −|a|
// (core/runtime/math/fast_exp.h, ~2 ulp), so it is finite for every finite a.
#include <cstdint>

namespace tn {

/// Raw forward on n floats: y = silu(a)·b (y may not overlap a or b; a may equal b).
void silu_gate_forward(const float* a, const float* b, float* y, int64_t n);
/// silu_gate_forward with y rounded to bf16 (to_bf16_bits of the same f32 value), for a product
/// that reads y in bf16 (core/runtime/ops/swiglu.h).
void silu_gate_forward_bf16(const float* a, const float* b, uint16_t* y, int64_t n);

/// Where silu_gate_backward_rows writes: da and db in f32 and/or rounded to bf16 (each may be
/// null), and the bias gradients of a and b (column sums of da and db, each may be null) added in.
struct SiluGateGrads {
  float *da = nullptr, *db = nullptr;
  uint16_t *da16 = nullptr, *db16 = nullptr;
  float *bias_a = nullptr, *bias_b = nullptr;
};

/// The backward of silu_gate_forward on [rows, cols] (a, b, dy row-major), in one pass: da and db,
/// written where `grads` says, and their column sums (the gradients of a bias
/// added to a and to b) added into bias_a and bias_b in the order of add_column_sums (rows in
/// order from zero, then added), so they equal add_column_sums on the f32 da and db bit for bit.
/// Each thread takes one contiguous range of whole 64-column blocks (so at most ceil(cols / 64)
/// threads work). The outputs may not overlap a, b or dy.
void silu_gate_backward_rows(const float* a, const float* b, const float* dy, int64_t rows,
                             int64_t cols, const SiluGateGrads& grads);

}  // namespace tn
