#include "core/ops/elementwise.h"

#include "core/autograd/grad_accum.h"
#include "core/error.h"
#include "core/math/isa_clones.h"
#include "core/parallel.h"

namespace tn {
namespace {

void check_same(const char* op, const Var& a, const Var& b) {
  if (a->value.shape() != b->value.shape())
    throw ShapeError(std::string("[") + op + "] shapes differ: " + shape_str(a->value.shape()) +
                     " vs " + shape_str(b->value.shape()));
}

/// Delivers dy * factor (factor may be null: plain copy) into v's gradient.
void deliver(const Var& v, const float* dy, const float* factor, float alpha, int64_t n) {
  if (!v->requires_grad) return;
  GradSink sink(v);
  float* out = sink.data();
  if (factor) {
#pragma omp parallel for simd schedule(static) if (n > kParallelMinElements)
    for (int64_t i = 0; i < n; ++i) out[i] = dy[i] * factor[i] * alpha;
  } else {
#pragma omp parallel for simd schedule(static) if (n > kParallelMinElements)
    for (int64_t i = 0; i < n; ++i) out[i] = dy[i] * alpha;
  }
}

/// Entries [begin, end) of dropout: m_i = 0 when counter_uniform(key, i) < p, else keep_scale;
/// y_i = x_i m_i.
TN_ISA_CLONES void dropout_span(uint64_t key, float p, float keep_scale, int64_t begin,
                                int64_t end, const float* __restrict x, float* __restrict m,
                                float* __restrict y) {
  for (int64_t i = begin; i < end; ++i) {
    m[i] = counter_uniform(key, static_cast<uint64_t>(i)) < p ? 0.0f : keep_scale;
    y[i] = x[i] * m[i];
  }
}

}  // namespace

Var add(Tape& tape, const Var& a, const Var& b) {
  check_same("add", a, b);
  const int64_t n = a->value.numel();
  Tensor y = Tensor::empty(a->value.shape());
  const float* ap = a->value.data();
  const float* bp = b->value.data();
  float* yp = y.data();
#pragma omp parallel for simd schedule(static) if (n > kParallelMinElements)
  for (int64_t i = 0; i < n; ++i) yp[i] = ap[i] + bp[i];
  Var result = make_var(std::move(y));
  if (!tape.needs_grad({&a, &b})) return result;
  result->requires_grad = true;
  tape.record([a, b, result, n]() {
    if (!result->has_grad()) return;
    deliver(a, result->grad.data(), nullptr, 1.0f, n);
    deliver(b, result->grad.data(), nullptr, 1.0f, n);
  });
  return result;
}

Var mul(Tape& tape, const Var& a, const Var& b) {
  check_same("mul", a, b);
  const int64_t n = a->value.numel();
  Tensor y = Tensor::empty(a->value.shape());
  const float* ap = a->value.data();
  const float* bp = b->value.data();
  float* yp = y.data();
#pragma omp parallel for simd schedule(static) if (n > kParallelMinElements)
  for (int64_t i = 0; i < n; ++i) yp[i] = ap[i] * bp[i];
  Var result = make_var(std::move(y));
  if (!tape.needs_grad({&a, &b})) return result;
  result->requires_grad = true;
  tape.record([a, b, result, n]() {
    if (!result->has_grad()) return;
    deliver(a, result->grad.data(), b->value.data(), 1.0f, n);
    deliver(b, result->grad.data(), a->value.data(), 1.0f, n);
  });
  return result;
}

Var scale(Tape& tape, const Var& x, float alpha) {
  const int64_t n = x->value.numel();
  Tensor y = Tensor::empty(x->value.shape());
  const float* xp = x->value.data();
  float* yp = y.data();
#pragma omp parallel for simd schedule(static) if (n > kParallelMinElements)
  for (int64_t i = 0; i < n; ++i) yp[i] = xp[i] * alpha;
  Var result = make_var(std::move(y));
  if (!tape.needs_grad({&x})) return result;
  result->requires_grad = true;
  tape.record([x, result, n, alpha]() {
    if (!result->has_grad()) return;
    deliver(x, result->grad.data(), nullptr, alpha, n);
  });
  return result;
}

Var dropout(Tape& tape, const Var& x, float p, bool training, Rng& rng) {
  if (!training || p <= 0.0f) return x;
  if (p >= 1.0f) throw ShapeError("[dropout] p must be < 1, got " + std::to_string(p));
  const int64_t n = x->value.numel();
  const uint64_t key = rng.key();
  const float keep_scale = 1.0f / (1.0f - p);
  Tensor mask = Tensor::empty(x->value.shape());
  Tensor y = Tensor::empty(x->value.shape());
  float* mp = mask.data();
  float* yp = y.data();
  const float* xp = x->value.data();
  parallel_spans(n, kParallelMinElements, [&](int64_t begin, int64_t end) {
    dropout_span(key, p, keep_scale, begin, end, xp, mp, yp);
  });
  Var result = make_var(std::move(y));
  if (!tape.needs_grad({&x})) return result;
  result->requires_grad = true;
  tape.record([x, result, mask, n]() {
    if (!result->has_grad()) return;
    deliver(x, result->grad.data(), mask.data(), 1.0f, n);
  });
  return result;
}

}  // namespace tn
