#include "core/autograd/grad_accum.h"

#include <algorithm>

#include "core/parallel.h"

namespace tn {

GradSink::GradSink(const Var& v) : var_(v) {
  if (!var_->has_grad()) {
    var_->grad = Tensor::empty(var_->value.shape());
    dst_ = var_->grad.data();
    committed_ = true;  // written in place
  } else {
    scratch_ = Tensor::empty(var_->value.shape());
    dst_ = scratch_.data();
  }
}

void GradSink::commit() {
  if (committed_) return;
  add_inplace(var_->grad.data(), scratch_.data(), scratch_.numel());
  committed_ = true;
}

GradSink::~GradSink() {
  if (!committed_) commit();
}

void add_inplace(float* y, const float* x, int64_t n) {
#pragma omp parallel for simd schedule(static) if (n > kParallelMinElements)
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

float* grad_destination(const Var& v, bool& accumulate) {
  accumulate = v->has_grad();
  if (!accumulate) v->grad = Tensor::empty(v->value.shape());
  return v->grad.data();
}

void add_column_sums(const float* dy, int64_t rows, int64_t cols, float* db) {
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

}  // namespace tn
