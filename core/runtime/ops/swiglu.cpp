#include "core/runtime/ops/swiglu.h"

#include <memory>
#include <string>
#include <utility>

#include "core/runtime/autograd/grad_accum.h"
#include "core/error.h"
#include "core/runtime/ops/operand.h"
#include "core/runtime/ops/silu_gate.h"

namespace tn {
namespace {

/// What the backward needs: the inputs, the weights' operands (bf16 copies on a bf16 tape), the
/// two branches a = x W1ᵀ + b1 and b = x W2ᵀ + b2, and the gated product h; of the output, its
/// gradient only (its value is read by no backward here).
struct Saved {
  Var x;
  GradRef dy;
  SwiGluWeights w;
  Operand xa, w1, w2, w3, h;
  Tensor a, b, h32;  // h32: h on an f32 tape (h.f32 points into it)
  int64_t rows = 0, d = 0, d_ff = 0;
  bool bf16 = false;
};

float* bias_grad(const Var& bias) {
  return bias && bias->requires_grad ? bias->grad_buf().data() : nullptr;
}

/// dx (+)= db W2 + da W1 (in that order: the order of two separate linears' backwards), then dW2
/// (+)= dbᵀ x and dW1 (+)= daᵀ x.
void branch_products(const Saved& s, const Operand& da, const Operand& db) {
  if (s.x->requires_grad) {
    bool acc;
    float* dx = grad_destination(s.x, acc);
    product({.m = s.rows, .n = s.d, .k = s.d_ff, .accumulate = acc}, db, s.w2, dx);
    product({.m = s.rows, .n = s.d, .k = s.d_ff, .accumulate = true}, da, s.w1, dx);
  }
  for (auto [dz, w] : {std::pair{&db, &s.w.w2}, std::pair{&da, &s.w.w1}}) {
    if (!(*w)->requires_grad) continue;
    bool acc;
    float* dw = grad_destination(*w, acc);
    product({.m = s.d_ff, .n = s.d, .k = s.rows, .trans_a = true, .accumulate = acc}, *dz, s.xa, dw);
  }
}

void backward(const Saved& s) {
  if (!s.dy.has_grad()) return;
  const float* dy = s.dy.grad().data();
  const Operand dya =
      operand(s.bf16, dy, [&] { return Bf16Buffer::copy_of(dy, s.rows * s.d); });
  const SwiGluWeights& w = s.w;
  const bool inner = s.x->requires_grad || w.w1->requires_grad || w.w2->requires_grad ||
                     (w.b1 && w.b1->requires_grad) || (w.b2 && w.b2->requires_grad);
  if (inner) {
    Tensor dh = Tensor::empty({s.rows, s.d_ff});  // dh = dy W3
    product({.m = s.rows, .n = s.d_ff, .k = s.d}, dya, s.w3, dh.data());
    // The branches' gradients, f32 or only bf16, with the bias gradients in the same pass.
    Tensor da32, db32;
    std::shared_ptr<Bf16Buffer> da16, db16;
    SiluGateGrads g{.bias_a = bias_grad(w.b1), .bias_b = bias_grad(w.b2)};
    if (s.bf16) {
      da16 = std::make_shared<Bf16Buffer>(s.rows * s.d_ff);
      db16 = std::make_shared<Bf16Buffer>(s.rows * s.d_ff);
      g.da16 = da16->data();
      g.db16 = db16->data();
    } else {
      da32 = Tensor::empty({s.rows, s.d_ff});
      db32 = Tensor::empty({s.rows, s.d_ff});
      g.da = da32.data();
      g.db = db32.data();
    }
    silu_gate_backward_rows(s.a.data(), s.b.data(), dh.data(), s.rows, s.d_ff, g);
    dh = Tensor();  // back to the pool before the four branch products
    branch_products(s, Operand{g.da, da16}, Operand{g.db, db16});
  }
  if (w.w3->requires_grad) {  // dW3 (+)= dyᵀ h
    bool acc;
    float* dw = grad_destination(w.w3, acc);
    product({.m = s.d, .n = s.d_ff, .k = s.rows, .trans_a = true, .accumulate = acc}, dya, s.h, dw);
  }
  if (float* db3 = bias_grad(w.b3)) add_column_sums(dy, s.rows, s.d, db3);
}

void check_shapes(const Var& x, const SwiGluWeights& w) {
  for (auto [v, name] : {std::pair{&w.w1, "w1"}, std::pair{&w.w2, "w2"}, std::pair{&w.w3, "w3"}})
    if (!*v)
      throw ShapeError(std::string("[swiglu] ") + name + " is missing (only biases may be null)");
  const int64_t d = x->value.dim(-1), d_ff = w.w1->value.dim(0);
  auto expect = [](const Var& v, const Shape& shape, const char* name) {
    if (v && v->value.shape() != shape)
      throw ShapeError(std::string("[swiglu] ") + name + " " + shape_str(v->value.shape()) +
                       ", expected " + shape_str(shape));
  };
  expect(w.w1, {d_ff, d}, "w1");
  expect(w.w2, {d_ff, d}, "w2");
  expect(w.w3, {d, d_ff}, "w3");
  expect(w.b1, {d_ff}, "b1");
  expect(w.b2, {d_ff}, "b2");
  expect(w.b3, {d}, "b3");
}

const float* data_or_null(const Var& v) { return v ? v->value.data() : nullptr; }

}  // namespace

Var swiglu(Tape& tape, const Var& x, const SwiGluWeights& w) {
  check_shapes(x, w);
  Saved s;
  s.x = x;
  s.w = w;
  s.bf16 = tape.bf16();
  s.d = x->value.dim(-1);
  s.d_ff = w.w1->value.dim(0);
  s.rows = x->value.numel() / s.d;
  s.xa = operand(s.bf16, x->value.data(), [&] { return tape.bf16_of(x); });
  s.w1 = weight_operand(tape, w.w1);
  s.w2 = weight_operand(tape, w.w2);
  s.w3 = weight_operand(tape, w.w3);
  s.a = Tensor::empty({s.rows, s.d_ff});
  s.b = Tensor::empty({s.rows, s.d_ff});
  product({.m = s.rows, .n = s.d_ff, .k = s.d, .trans_b = true, .bias = w.b1 != nullptr}, s.xa,
          s.w1, s.a.data(), data_or_null(w.b1));
  product({.m = s.rows, .n = s.d_ff, .k = s.d, .trans_b = true, .bias = w.b2 != nullptr}, s.xa,
          s.w2, s.b.data(), data_or_null(w.b2));
  const int64_t n = s.rows * s.d_ff;
  if (s.bf16) {  // h only in bf16: the W3 products are its only readers
    auto h16 = std::make_shared<Bf16Buffer>(n);
    silu_gate_forward_bf16(s.a.data(), s.b.data(), h16->data(), n);
    s.h.bf16 = h16;
  } else {
    s.h32 = Tensor::empty({s.rows, s.d_ff});
    silu_gate_forward(s.a.data(), s.b.data(), s.h32.data(), n);
    s.h.f32 = s.h32.data();
  }
  Tensor y = Tensor::empty(x->value.shape());
  product({.m = s.rows, .n = s.d, .k = s.d_ff, .trans_b = true, .bias = w.b3 != nullptr}, s.h,
          s.w3, y.data(), data_or_null(w.b3));
  Var result = make_var(std::move(y));
  if (!tape.needs_grad({&x, &w.w1, &w.b1, &w.w2, &w.b2, &w.w3, &w.b3})) return result;
  result->requires_grad = true;
  s.dy = GradRef(result);
  tape.record([s]() { backward(s); });
  return result;
}

}  // namespace tn
