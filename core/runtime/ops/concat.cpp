#include "core/runtime/ops/concat.h"

#include <cstring>

#include "core/error.h"

namespace tn {

Var concat_last(Tape& tape, const std::vector<Var>& inputs) {
  if (inputs.empty()) throw ShapeError("[concat_last] no inputs");
  Shape lead = inputs[0]->value.shape();
  lead.pop_back();
  const int64_t rows = numel_of(lead);
  std::vector<int64_t> widths;
  int64_t total = 0;
  for (const Var& v : inputs) {
    Shape l = v->value.shape();
    l.pop_back();
    if (l != lead)
      throw ShapeError("[concat_last] " + shape_str(v->value.shape()) + " does not match " +
                       shape_str(inputs[0]->value.shape()));
    widths.push_back(v->value.dim(-1));
    total += widths.back();
  }
  Shape out_shape = lead;
  out_shape.push_back(total);
  Tensor y = Tensor::empty(out_shape);
  int64_t offset = 0;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const float* src = inputs[k]->value.data();
    for (int64_t r = 0; r < rows; ++r)
      std::memcpy(y.data() + r * total + offset, src + r * widths[k], sizeof(float) * widths[k]);
    offset += widths[k];
  }
  Var result = make_var(std::move(y));
  bool any = false;
  for (const Var& v : inputs) any |= tape.needs_grad({&v});
  if (!any) return result;
  result->requires_grad = true;
  tape.record([inputs, result, widths, rows, total]() {
    if (!result->has_grad()) return;
    int64_t offset = 0;
    for (size_t k = 0; k < inputs.size(); ++k) {
      if (inputs[k]->requires_grad) {
        float* dx = inputs[k]->grad_buf().data();
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t j = 0; j < widths[k]; ++j)
            dx[r * widths[k] + j] += result->grad().data()[r * total + offset + j];
      }
      offset += widths[k];
    }
  });
  return result;
}

}  // namespace tn
