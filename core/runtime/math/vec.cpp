#include "core/runtime/math/vec.h"

#include "core/runtime/math/isa_clones.h"
#include "core/runtime/parallel.h"

namespace tn {
namespace {

// The span bodies take no __restrict: callers may pass y equal to an input (in place), which
// element-wise loops of this form allow (each y[i] depends on the inputs' element i only).

TN_ISA_CLONES void add_span(const float* a, const float* b, float* y, int64_t begin, int64_t end) {
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) y[i] = a[i] + b[i];
}

TN_ISA_CLONES void mul_scale_span(const float* x, const float* f, float alpha, float* y,
                                  int64_t begin, int64_t end) {
  if (f) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) y[i] = x[i] * f[i] * alpha;
  } else {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) y[i] = x[i] * alpha;
  }
}

TN_ISA_CLONES void accumulate_span(float* y, const float* x, int64_t begin, int64_t end) {
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) y[i] += x[i];
}

TN_ISA_CLONES void axpy_span(float* y, float alpha, const float* x, int64_t begin, int64_t end) {
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) y[i] += alpha * x[i];
}

TN_ISA_CLONES void add_scalar_span(float* y, float c, int64_t begin, int64_t end) {
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) y[i] += c;
}

}  // namespace

void vec_add(const float* a, const float* b, float* y, int64_t n) {
  parallel_spans(n, kParallelMinElements, [&](int64_t b0, int64_t e0) { add_span(a, b, y, b0, e0); });
}

void vec_mul_scale(const float* x, const float* f, float alpha, float* y, int64_t n) {
  parallel_spans(n, kParallelMinElements,
                 [&](int64_t b0, int64_t e0) { mul_scale_span(x, f, alpha, y, b0, e0); });
}

void vec_accumulate(float* y, const float* x, int64_t n) {
  parallel_spans(n, kParallelMinElements, [&](int64_t b0, int64_t e0) { accumulate_span(y, x, b0, e0); });
}

void vec_axpy(float* y, float alpha, const float* x, int64_t n) {
  parallel_spans(n, kParallelMinElements, [&](int64_t b0, int64_t e0) { axpy_span(y, alpha, x, b0, e0); });
}

void vec_add_scalar(float* y, float c, int64_t n) {
  parallel_spans(n, kParallelMinElements, [&](int64_t b0, int64_t e0) { add_scalar_span(y, c, b0, e0); });
}

}  // namespace tn
