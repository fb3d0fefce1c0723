#pragma once
// The rows batch_norm normalises (core/runtime/ops/batch_norm.h): the argument checks shared by
// the op and its naive reference, and the copies of a padded batch's real rows into a contiguous
// block and back.
#include <cstdint>
#include <vector>

#include "core/runtime/ops/batch_norm.h"
#include "core/runtime/tensor.h"

namespace tn {

/// x seen as [rows, d], and which rows are real (not padding).
struct BatchNormLayout {
  int64_t rows = 0;                   // all rows of x (batch·seq_len)
  int64_t d = 0;                      // features
  std::vector<int64_t> real_rows;     // indices of the real rows, filled only with a mask
  std::vector<int64_t> block_row;     // [rows]: row's index among the real rows, −1 if padded
  int64_t n_real = 0;                 // N
  bool masked = false;                // a mask with at least one padded row
};

/// Checks x (at least 2 dims, d >= 1), weight and bias ([d] or absent), the state's running
/// statistics ([d]) and row_valid (one flag per row); in training, at least 2 real rows (unless
/// `synced`: the ranks' total counts then). Throws ShapeError naming the shapes and the fix.
BatchNormLayout check_batch_norm_args(const Tensor& x, const Tensor* weight, const Tensor* bias,
                                      const BatchNormState& state, bool training,
                                      const std::vector<uint8_t>* row_valid, bool synced = false);
/// Copies the real rows of src [rows, d] into dst [N, d].
void batch_norm_gather_rows(const BatchNormLayout& l, const float* src, float* dst);
/// Writes src [N, d] back to the real rows of dst [rows, d] and zeros the padded rows.
void batch_norm_scatter_rows(const BatchNormLayout& l, const float* src, float* dst);

}  // namespace tn
