#include "core/runtime/ops/gather_rows.h"

#include <cstring>

#include "core/error.h"

namespace tn {

Var gather_rows(Tape& tape, const Var& x, const std::vector<int64_t>& rows) {
  const int64_t d = x->value.dim(-1);
  const int64_t n = d ? x->value.numel() / d : 0;
  const auto r = static_cast<int64_t>(rows.size());
  for (int64_t i = 0; i < r; ++i)
    if (rows[i] < 0 || rows[i] >= n)
      throw ShapeError("[gather_rows] row " + std::to_string(rows[i]) + " outside [0, " + std::to_string(n) +
                       ") of " + shape_str(x->value.shape()));
  Tensor y = Tensor::empty({r, d});
  const float* xp = x->value.data();
  float* yp = y.data();
  for (int64_t i = 0; i < r; ++i) std::memcpy(yp + i * d, xp + rows[i] * d, sizeof(float) * d);
  Var result = make_var(std::move(y));
  if (!tape.needs_grad({&x})) return result;
  result->requires_grad = true;
  tape.record([x, result, rows, d]() {
    if (!result->has_grad()) return;
    float* dx = x->grad_buf().data();
    const float* dy = result->grad().data();
    for (size_t i = 0; i < rows.size(); ++i) {
      float* dst = dx + rows[i] * d;
      const float* src = dy + static_cast<int64_t>(i) * d;
#pragma omp simd
      for (int64_t j = 0; j < d; ++j) dst[j] += src[j];
    }
  });
  return result;
}

}  // namespace tn
