#include "core/runtime/ops/linear.h"

#include <algorithm>
#include <memory>

#include "core/runtime/autograd/grad_accum.h"
#include "core/runtime/dnnl/matmul.h"
#include "core/error.h"
#include "core/runtime/ops/operand.h"

namespace tn {

Var linear(Tape& tape, const Var& x, const Var& weight, const Var& bias) {
  const Tensor& w = weight->value;
  const int64_t in = w.dim(1), out = w.dim(0);
  if (x->value.dim(-1) != in)
    throw ShapeError("[linear] x " + shape_str(x->value.shape()) + " does not match weight " +
                     shape_str(w.shape()));
  const int64_t rows = x->value.numel() / in;
  Shape out_shape = x->value.shape();
  out_shape.back() = out;
  Tensor y = Tensor::empty(out_shape);
  const float* bias_ptr = bias ? bias->value.data() : nullptr;
  const bool record = tape.needs_grad({&x, &weight, &bias});
  // bf16 products: x through the tape's cache (shared with the other products reading it and
  // with this op's weight gradient), W as the copy the optimizer keeps (for the forward and dx).
  const bool bf16 = tape.bf16();
  const Operand xa = operand(bf16, x->value.data(), [&] { return tape.bf16_of(x); });
  const Operand wa = weight_operand(tape, weight);
  product({.m = rows, .n = out, .k = in, .trans_b = true, .bias = bias != nullptr}, xa, wa,
          y.data(), bias_ptr);
  Var result = make_var(std::move(y));
  if (!record) return result;
  result->requires_grad = true;
  // The output's value is read by no backward here: hold its gradient only.
  tape.record([x, weight, bias, dy_ref = GradRef(result), rows, in, out, bf16, xa, wa]() {
    if (!dy_ref.has_grad()) return;
    const Tensor& dy = dy_ref.grad();
    // In bf16, dy is converted once: A of dx = dy W, and (read transposed) of dW += dyᵀ x.
    const Operand dya =
        operand(bf16, dy.data(), [&] { return Bf16Buffer::copy_of(dy.data(), rows * out); });
    if (x->requires_grad) {  // dx (+)= dy W
      bool acc;
      float* dx = grad_destination(x, acc);
      product({.m = rows, .n = in, .k = out, .accumulate = acc}, dya, wa, dx);
    }
    if (weight->requires_grad) {  // dW (+)= dyᵀ x
      bool acc;
      float* dw = grad_destination(weight, acc);
      product({.m = out, .n = in, .k = rows, .trans_a = true, .accumulate = acc}, dya, xa, dw);
    }
    if (bias && bias->requires_grad) add_column_sums(dy.data(), rows, out, bias->grad_buf().data());
  });
  return result;
}

}  // namespace tn
