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
  const bool bf16 = tape.bf16();
  matmul({1, rows, out, in, false, true, false, bias != nullptr, bf16}, x->value.data(), w.data(),
         y.data(), bias ? bias->value.data() : nullptr);
  Var result = make_var(std::move(y));
  if (!tape.needs_grad({&x, &weight, &bias})) return result;
  result->requires_grad = true;
  tape.record([x, weight, bias, result, rows, in, out, bf16]() {
    if (!result->has_grad()) return;
    const float* dy = result->grad.data();
    if (x->requires_grad) {  // dx = dy W
      GradSink dx(x);
      matmul({1, rows, in, out, false, false, false, false, bf16}, dy, weight->value.data(),
             dx.data());
    }
    if (weight->requires_grad) {  // dW += dyᵀ x
      matmul({1, out, in, rows, true, false, true, false, bf16}, dy, x->value.data(),
             weight->grad_buf().data());
    }
    if (bias && bias->requires_grad) bias_grad(dy, rows, out, bias->grad_buf().data());
  });
  return result;
}

}  // namespace tn
