#include "core/ops/silu_gate.h"

#include <cmath>
#include <memory>

#include "core/autograd/grad_accum.h"
#include "core/error.h"
#include "core/math/fast_exp.h"
#include "core/math/isa_clones.h"
#include "core/parallel.h"

namespace tn {
namespace {

/// σ(x) and 1 − σ(x) = σ(−x): 1 / (1 + e) and e / (1 + e) from e = exp(−|x|) <= 1, the larger one
/// for x >= 0; each exact to rounding (1 − σ is not a difference that cancels), no overflow for
/// any x, and selects that vectorise (select_float).
struct Sigmoid {
  float s, one_minus_s;
};
inline Sigmoid sigmoid(float x) {
  const float e = exp_nonpositive(-std::fabs(x));
  const float r = 1.0f / (1.0f + e);
  const bool pos = x >= 0.0f;
  return {select_float(pos, r, e * r), select_float(pos, e * r, r)};
}

TN_ISA_CLONES void forward_span(const float* __restrict a, const float* __restrict b,
                                float* __restrict y, int64_t begin, int64_t end) {
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) y[i] = a[i] * sigmoid(a[i]).s * b[i];
}

TN_ISA_CLONES void backward_span(const float* __restrict a, const float* __restrict b,
                                 const float* __restrict dy, float* __restrict da,
                                 float* __restrict db, int64_t begin, int64_t end) {
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) {
    const Sigmoid sg = sigmoid(a[i]);
    const float silu = a[i] * sg.s;
    da[i] = dy[i] * b[i] * (sg.s + silu * sg.one_minus_s);  // silu' = σ + a·σ(1 − σ)
    db[i] = dy[i] * silu;
  }
}

}  // namespace

void silu_gate_forward(const float* a, const float* b, float* y, int64_t n) {
  parallel_spans(n, kParallelMinElements, [&](int64_t s, int64_t e) { forward_span(a, b, y, s, e); });
}

void silu_gate_backward(const float* a, const float* b, const float* dy, float* da, float* db,
                        int64_t n) {
  parallel_spans(n, kParallelMinElements,
                 [&](int64_t s, int64_t e) { backward_span(a, b, dy, da, db, s, e); });
}

Var silu_gate(Tape& tape, const Var& a, const Var& b) {
  if (a->value.shape() != b->value.shape())
    throw ShapeError("[silu_gate] shapes differ: " + shape_str(a->value.shape()) + " vs " +
                     shape_str(b->value.shape()));
  const int64_t n = a->value.numel();
  Tensor y = Tensor::empty(a->value.shape());
  silu_gate_forward(a->value.data(), b->value.data(), y.data(), n);
  Var result = make_var(std::move(y));
  if (!tape.needs_grad({&a, &b})) return result;
  result->requires_grad = true;
  tape.record([a, b, result, n]() {
    if (!result->has_grad() || (!a->requires_grad && !b->requires_grad)) return;
    // Both gradients come out of one pass; an input that needs none gets a scratch buffer.
    Tensor unused;
    auto sink_or_scratch = [&](const Var& v) -> std::unique_ptr<GradSink> {
      return v->requires_grad ? std::make_unique<GradSink>(v) : nullptr;
    };
    std::unique_ptr<GradSink> da = sink_or_scratch(a), db = sink_or_scratch(b);
    if (!da || !db) unused = Tensor::empty(a->value.shape());
    silu_gate_backward(a->value.data(), b->value.data(), result->grad.data(),
                       da ? da->data() : unused.data(), db ? db->data() : unused.data(), n);
    if (da) da->commit();
    if (db) db->commit();
  });
  return result;
}

}  // namespace tn
