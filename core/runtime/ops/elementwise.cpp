#include "core/runtime/ops/elementwise.h"

#include "core/runtime/autograd/grad_accum.h"
#include "core/error.h"
#include "core/runtime/math/isa_clones.h"
#include "core/runtime/math/vec.h"
#include "core/runtime/parallel.h"

namespace tn {
namespace {

void check_same(const char* op, const Var& a, const Var& b) {
  if (a->value.shape() != b->value.shape())
    throw ShapeError(std::string("[") + op + "] shapes differ: " + shape_str(a->value.shape()) +
                     " vs " + shape_str(b->value.shape()));
}

/// Delivers dy * factor (factor may be null: plain copy) into v's gradient.
void deliver(const GradRef& v, const float* dy, const float* factor, float alpha, int64_t n) {
  if (!v.requires_grad()) return;
  GradSink sink(v);
  float* out = sink.data();
  vec_mul_scale(dy, factor, alpha, out, n);
}

/// The dropout weight of entry i (core/runtime/rng.h): the same (key, i) gives the same weight in the
/// forward and the backward, so no mask is stored.
inline float dropout_factor(uint64_t key, float p, float keep_scale, int64_t i) {
  return dropout_weight(key, static_cast<uint64_t>(i), p, keep_scale);
}

/// Entries [begin, end) of y = base + x ⊙ m (base may be null: y = x ⊙ m), m the dropout factors.
TN_ISA_CLONES void dropout_span(uint64_t key, float p, float keep_scale, int64_t begin, int64_t end,
                                const float* __restrict x, const float* __restrict base, float* __restrict y) {
  if (base) {
    for (int64_t i = begin; i < end; ++i) y[i] = base[i] + x[i] * dropout_factor(key, p, keep_scale, i);
  } else {
    for (int64_t i = begin; i < end; ++i) y[i] = x[i] * dropout_factor(key, p, keep_scale, i);
  }
}

/// Entries [begin, end) of dx = dy ⊙ m, the factors regenerated from the forward's key.
TN_ISA_CLONES void dropout_grad_span(uint64_t key, float p, float keep_scale, int64_t begin, int64_t end,
                                     const float* __restrict dy, float* __restrict dx) {
  for (int64_t i = begin; i < end; ++i) dx[i] = dy[i] * dropout_factor(key, p, keep_scale, i);
}

/// Hands the gradient of `owner` on to v unchanged (v = an input of a sum). When v has no gradient
/// yet and the backward closure holds the only handle on owner's gradient (no one can read it
/// again), v takes the buffer itself; otherwise it is copied or added.
void pass_through(const GradRef& v, const GradRef& owner) {
  if (!v.requires_grad()) return;
  if (!v.has_grad() && owner.holders() == 1) {
    v.grad() = owner.grad();
    return;
  }
  deliver(v, owner.grad().data(), nullptr, 1.0f, owner.grad().numel());
}

/// y = base + dropout(x) (base null: y = dropout(x)) with its backward; p in (0, 1).
Var dropout_into(Tape& tape, const Var& base, const Var& x, float p, Rng& rng) {
  if (p >= 1.0f) throw ShapeError("[dropout] p must be < 1, got " + std::to_string(p));
  const int64_t n = x->value.numel();
  const uint64_t key = rng.key();
  const float keep_scale = 1.0f / (1.0f - p);
  Tensor y = Tensor::empty(x->value.shape());
  float* yp = y.data();
  const float* xp = x->value.data();
  const float* bp = base ? base->value.data() : nullptr;
  parallel_spans(n, kParallelMinElements, [&](int64_t begin, int64_t end) {
    dropout_span(key, p, keep_scale, begin, end, xp, bp, yp);
  });
  Var result = make_var(std::move(y));
  if (!tape.needs_grad({&base, &x})) return result;
  result->requires_grad = true;
  // Neither value is read by the backward (the mask is regenerated from the key): gradients only.
  tape.record([base_ref = GradRef(base), dx_ref = GradRef(x), dy_ref = GradRef(result), n, key, p, keep_scale]() {
    if (!dy_ref.has_grad()) return;
    if (dx_ref.requires_grad()) {
      GradSink sink(dx_ref);
      float* dx = sink.data();
      const float* dy = dy_ref.grad().data();
      parallel_spans(n, kParallelMinElements, [&](int64_t begin, int64_t end) {
        dropout_grad_span(key, p, keep_scale, begin, end, dy, dx);
      });
    }
    if (base_ref) pass_through(base_ref, dy_ref);
  });
  return result;
}

}  // namespace

Var add(Tape& tape, const Var& a, const Var& b) {
  check_same("add", a, b);
  const int64_t n = a->value.numel();
  Tensor y = Tensor::empty(a->value.shape());
  const float* ap = a->value.data();
  const float* bp = b->value.data();
  float* yp = y.data();
  vec_add(ap, bp, yp, n);
  Var result = make_var(std::move(y));
  if (!tape.needs_grad({&a, &b})) return result;
  result->requires_grad = true;
  // A sum's backward reads no value: it holds the three gradients only.
  tape.record([da = GradRef(a), db = GradRef(b), dy = GradRef(result), n]() {
    if (!dy.has_grad()) return;
    deliver(db, dy.grad().data(), nullptr, 1.0f, n);
    pass_through(da, dy);  // after b: a may take result's buffer
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
  vec_mul_scale(ap, bp, 1.0f, yp, n);
  Var result = make_var(std::move(y));
  if (!tape.needs_grad({&a, &b})) return result;
  result->requires_grad = true;
  tape.record([a, b, result, n]() {
    if (!result->has_grad()) return;
    deliver(a, result->grad().data(), b->value.data(), 1.0f, n);
    deliver(b, result->grad().data(), a->value.data(), 1.0f, n);
  });
  return result;
}

Var scale(Tape& tape, const Var& x, float alpha) {
  const int64_t n = x->value.numel();
  Tensor y = Tensor::empty(x->value.shape());
  const float* xp = x->value.data();
  float* yp = y.data();
  vec_mul_scale(xp, nullptr, alpha, yp, n);
  Var result = make_var(std::move(y));
  if (!tape.needs_grad({&x})) return result;
  result->requires_grad = true;
  tape.record([dx = GradRef(x), dy = GradRef(result), n, alpha]() {
    if (!dy.has_grad()) return;
    deliver(dx, dy.grad().data(), nullptr, alpha, n);
  });
  return result;
}

Var dropout(Tape& tape, const Var& x, float p, bool training, Rng& rng) {
  if (!training || p <= 0.0f) return x;
  return dropout_into(tape, nullptr, x, p, rng);
}

Var add_dropout(Tape& tape, const Var& base, const Var& x, float p, bool training, Rng& rng) {
  if (!training || p <= 0.0f) return add(tape, base, x);
  check_same("add_dropout", base, x);
  return dropout_into(tape, base, x, p, rng);
}

}  // namespace tn
