#pragma once
// Threaded element-wise passes over float arrays whose loops run on the instruction set the CPU
// has (core/runtime/math/isa_clones.h). An OpenMP `parallel for simd` loop in an op is outlined into a
// function that is not cloned, so in the default (portable) build it ran SSE2 code; these split
// the range with parallel_spans and run each span in a cloned function instead. No reductions:
// every element gets the same bits on every instruction set, except vec_axpy's (fused or not).
#include <cstdint>

namespace tn {

/// y[i] = a[i] + b[i], i in [0, n). y may alias a or b.
void vec_add(const float* a, const float* b, float* y, int64_t n);

/// y[i] = x[i] · f[i] · alpha (f null: x[i] · alpha), i in [0, n). y may alias x.
void vec_mul_scale(const float* x, const float* f, float alpha, float* y, int64_t n);

/// y[i] += x[i], i in [0, n).
void vec_accumulate(float* y, const float* x, int64_t n);

/// y[i] += alpha · x[i], i in [0, n) (an FMA on the instruction sets that have one).
void vec_axpy(float* y, float alpha, const float* x, int64_t n);

/// y[i] += c, i in [0, n).
void vec_add_scalar(float* y, float c, int64_t n);

}  // namespace tn
