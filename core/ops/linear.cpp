#include "core/ops/linear.h"

#include <algorithm>

#include "core/autograd/grad_accum.h"
#include "core/dnnl/matmul.h"
#include "core/error.h"

namespace tn {

namespace {
/// Column sums of dy [rows, cols] added into db [cols]: threads split the columns into blocks of
/// 64, each walks every row with a contiguous inner loop (vectorised), accumulating in registers.
void bias_grad(const float* dy, int64_t rows, int64_t cols, float* db) {
  constexpr int64_t kBlock = 64;
  const int64_t blocks = (cols + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (rows * cols > 65536)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t j0 = blk * kBlock, width = std::min(kBlock, cols - j0);
    float acc[kBlock] = {};
    for (int64_t i = 0; i < rows; ++i) {
      const float* row = dy + i * cols + j0;
#pragma omp simd
      for (int64_t j = 0; j < width; ++j) acc[j] += row[j];
    }
    for (int64_t j = 0; j < width; ++j) db[j0 + j] += acc[j];
  }
}
}  // namespace

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
  if (tape.bf16()) {
    // bf16 products: x through the tape's cache (shared with the other products reading it and
    // with this op's weight gradient), W converted once for the forward and dx.
    std::shared_ptr<const Bf16Buffer> x16 = tape.bf16_of(x);
    std::shared_ptr<const Bf16Buffer> w16 = Bf16Buffer::copy_of(w.data(), w.numel());
    matmul_bf16(
        {.m = rows, .n = out, .k = in, .trans_b = true, .bias = bias != nullptr, .bf16 = true},
        x16->data(), w16->data(), y.data(), bias_ptr);
    Var result = make_var(std::move(y));
    if (!record) return result;
    result->requires_grad = true;
    tape.record([x, weight, bias, result, rows, in, out, x16, w16]() {
      if (!result->has_grad()) return;
      const float* dy = result->grad.data();
      // dy is converted once: A of dx = dy W, and (read transposed) of dW += dyᵀ x.
      auto dy16 = Bf16Buffer::copy_of(dy, rows * out);
      if (x->requires_grad) {
        bool acc;
        float* dx = grad_destination(x, acc);
        matmul_bf16({.m = rows, .n = in, .k = out, .accumulate = acc, .bf16 = true}, dy16->data(),
                    w16->data(), dx);
      }
      if (weight->requires_grad) {
        bool acc;
        float* dw = grad_destination(weight, acc);
        matmul_bf16(
            {.m = out, .n = in, .k = rows, .trans_a = true, .accumulate = acc, .bf16 = true},
            dy16->data(), x16->data(), dw);
      }
      if (bias && bias->requires_grad) bias_grad(dy, rows, out, bias->grad_buf().data());
    });
    return result;
  }
  matmul({.m = rows, .n = out, .k = in, .trans_b = true, .bias = bias != nullptr}, x->value.data(),
         w.data(), y.data(), bias_ptr);
  Var result = make_var(std::move(y));
  if (!record) return result;
  result->requires_grad = true;
  tape.record([x, weight, bias, result, rows, in, out]() {
    if (!result->has_grad()) return;
    const float* dy = result->grad.data();
    if (x->requires_grad) {  // dx (+)= dy W
      bool acc;
      float* dx = grad_destination(x, acc);
      matmul({.m = rows, .n = in, .k = out, .accumulate = acc}, dy, weight->value.data(), dx);
    }
    if (weight->requires_grad) {  // dW (+)= dyᵀ x
      bool acc;
      float* dw = grad_destination(weight, acc);
      matmul({.m = out, .n = in, .k = rows, .trans_a = true, .accumulate = acc}, dy,
             x->value.data(), dw);
    }
    if (bias && bias->requires_grad) bias_grad(dy, rows, out, bias->grad_buf().data());
  });
  return result;
}

}  // namespace tn
