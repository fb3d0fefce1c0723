#include "core/runtime/ops/activation_linear.h"

#include "core/runtime/autograd/grad_accum.h"
#include "core/runtime/dnnl/matmul.h"
#include "core/error.h"
#include "core/runtime/ops/linear.h"

namespace tn {

Var activation_linear(Tape& tape, const Var& a, Eltwise f, const Var& weight, const Var& bias) {
  if (tape.bf16()) return linear(tape, eltwise(tape, a, f), weight, bias);
  const Tensor& w = weight->value;
  const int64_t in = w.dim(1), out = w.dim(0);
  if (a->value.dim(-1) != in)
    throw ShapeError("[activation_linear] a " + shape_str(a->value.shape()) + " does not match weight " +
                     shape_str(w.shape()));
  const int64_t rows = a->value.numel() / in;
  Shape out_shape = a->value.shape();
  out_shape.back() = out;
  Tensor y = Tensor::empty(out_shape);
  {
    Tensor g = Tensor::empty(a->value.shape());  // f(a), released at the end of the forward
    eltwise_forward(f, a->value.data(), g.data(), g.numel());
    matmul({.m = rows, .n = out, .k = in, .trans_b = true, .bias = bias != nullptr}, g.data(), w.data(), y.data(),
           bias ? bias->value.data() : nullptr);
  }
  Var result = make_var(std::move(y));
  if (!tape.needs_grad({&a, &weight, &bias})) return result;
  result->requires_grad = true;
  tape.record([a, f, weight, bias, dy_ref = GradRef(result), rows, in, out]() {
    if (!dy_ref.has_grad()) return;
    const float* dy = dy_ref.grad().data();
    if (weight->requires_grad) {  // dW (+)= dyᵀ f(a), f(a) recomputed
      Tensor g = Tensor::empty(a->value.shape());
      eltwise_forward(f, a->value.data(), g.data(), g.numel());
      bool acc;
      float* dw = grad_destination(weight, acc);
      matmul({.m = out, .n = in, .k = rows, .trans_a = true, .accumulate = acc}, dy, g.data(), dw);
    }
    if (bias && bias->requires_grad) add_column_sums(dy, rows, out, bias->grad_buf().data());
    if (a->requires_grad) {  // da (+)= f'(a) ⊙ (dy W)
      Tensor dg = Tensor::empty(a->value.shape());
      matmul({.m = rows, .n = in, .k = out}, dy, weight->value.data(), dg.data());
      GradSink da(a);
      eltwise_backward(f, a->value.data(), dg.data(), da.data(), rows * in);
    }
  });
  return result;
}

}  // namespace tn
