#include "core/runtime/ops/batch_norm_layout.h"

#include <cstring>
#include <string>

#include "core/error.h"
#include "core/runtime/parallel.h"

namespace tn {

namespace {

/// Throws ShapeError unless `t` is absent or holds d values.
void check_param(const char* what, const Tensor* t, int64_t d) {
  if (t && t->defined() && t->numel() != d)
    throw ShapeError(std::string("[batch_norm] ") + what + " has shape " + shape_str(t->shape()) +
                     " but x has d = " + std::to_string(d) + " features; expected [" +
                     std::to_string(d) + "]");
}

}  // namespace

BatchNormLayout check_batch_norm_args(const Tensor& x, const Tensor* weight, const Tensor* bias,
                  const BatchNormState& state, bool training,
                  const std::vector<uint8_t>* row_valid, bool synced) {
  if (x.ndim() < 2)
    throw ShapeError("[batch_norm] x has shape " + shape_str(x.shape()) +
                     "; expected [batch, seq_len, d] (at least 2 dims)");
  BatchNormLayout l;
  l.d = x.dim(-1);
  if (l.d < 1) throw ShapeError("[batch_norm] x has shape " + shape_str(x.shape()) + " with d = 0");
  l.rows = x.numel() / l.d;
  check_param("weight", weight, l.d);
  check_param("bias", bias, l.d);
  if (!state.running_mean.defined() || !state.running_var.defined())
    throw ShapeError("[batch_norm] state has no running_mean/running_var; build it with "
                     "batch_norm_state(d_model)");
  check_param("state.running_mean", &state.running_mean, l.d);
  check_param("state.running_var", &state.running_var, l.d);
  l.n_real = l.rows;
  if (row_valid) {
    if (static_cast<int64_t>(row_valid->size()) != l.rows)
      throw ShapeError("[batch_norm] row_valid has " + std::to_string(row_valid->size()) +
                       " entries but x " + shape_str(x.shape()) + " has " + std::to_string(l.rows) +
                       " rows (batch·seq_len); pass one flag per row or null");
    l.block_row.assign(l.rows, -1);
    for (int64_t i = 0; i < l.rows; ++i)
      if ((*row_valid)[i]) {
        l.block_row[i] = static_cast<int64_t>(l.real_rows.size());
        l.real_rows.push_back(i);
      }
    l.n_real = static_cast<int64_t>(l.real_rows.size());
    l.masked = l.n_real != l.rows;
    if (!l.masked) {
      l.real_rows.clear();
      l.block_row.clear();
    }
  }
  if (synced) return l;  // the row count that matters is the ranks' total (checked after the sum)
  if (training && l.n_real == 0)
    throw ShapeError(row_valid ? "[batch_norm] row_valid marks all " + std::to_string(l.rows) +
                                     " rows of x " + shape_str(x.shape()) +
                                     " as padding: no rows to take training statistics from; "
                                     "drop the empty batch"
                               : "[batch_norm] x " + shape_str(x.shape()) +
                                     " has no rows to take training statistics from");
  if (training && l.n_real == 1)
    throw ShapeError("[batch_norm] only 1 real row in x " + shape_str(x.shape()) +
                     ": training statistics need at least 2 (the unbiased variance divides by "
                     "N − 1); use a larger batch or eval mode");
  return l;
}

void batch_norm_gather_rows(const BatchNormLayout& l, const float* src, float* dst) {
  const int64_t d = l.d;
#pragma omp parallel for schedule(static) if (l.n_real * d > kParallelMinElements)
  for (int64_t i = 0; i < l.n_real; ++i)
    std::memcpy(dst + i * d, src + l.real_rows[i] * d, sizeof(float) * d);
}

void batch_norm_scatter_rows(const BatchNormLayout& l, const float* src, float* dst) {
  const int64_t d = l.d;
#pragma omp parallel for schedule(static) if (l.rows * d > kParallelMinElements)
  for (int64_t i = 0; i < l.rows; ++i) {
    const int64_t k = l.block_row[i];
    if (k < 0) std::memset(dst + i * d, 0, sizeof(float) * d);
    else std::memcpy(dst + i * d, src + k * d, sizeof(float) * d);
  }
}

}  // namespace tn
