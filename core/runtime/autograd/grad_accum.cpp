#include "core/runtime/autograd/grad_accum.h"

#include <algorithm>

#include "core/runtime/math/isa_clones.h"
#include "core/runtime/math/vec.h"
#include "core/runtime/parallel.h"

namespace tn {

GradSink::GradSink(const GradRef& v) : var_(v) {
  if (!var_.has_grad()) {
    var_.grad() = Tensor::empty(var_.shape());
    dst_ = var_.grad().data();
    committed_ = true;  // written in place
  } else {
    scratch_ = Tensor::empty(var_.shape());
    dst_ = scratch_.data();
  }
}

void GradSink::commit() {
  if (committed_) return;
  add_inplace(var_.grad().data(), scratch_.data(), scratch_.numel());
  committed_ = true;
}

GradSink::~GradSink() {
  if (!committed_) commit();
}

void add_inplace(float* y, const float* x, int64_t n) { vec_accumulate(y, x, n); }

float* grad_destination(const GradRef& v, bool& accumulate) {
  accumulate = v.has_grad();
  if (!accumulate) v.grad() = Tensor::empty(v.shape());
  return v.grad().data();
}

namespace {

constexpr int64_t kColumnBlock = 64;

/// db[j0, j0 + width) += the column sums of dy's rows over those columns (width ≤ kColumnBlock),
/// compiled per instruction set (core/runtime/math/isa_clones.h).
TN_ISA_CLONES void column_sums_block(const float* __restrict dy, int64_t rows, int64_t cols, int64_t j0,
                                     int64_t width, float* __restrict db) {
  float acc[kColumnBlock] = {};
  for (int64_t i = 0; i < rows; ++i) {
    const float* row = dy + i * cols + j0;
#pragma omp simd
    for (int64_t j = 0; j < width; ++j) acc[j] += row[j];
  }
  for (int64_t j = 0; j < width; ++j) db[j0 + j] += acc[j];
}

}  // namespace

void add_column_sums(const float* dy, int64_t rows, int64_t cols, float* db) {
  const int64_t blocks = (cols + kColumnBlock - 1) / kColumnBlock;
  const int64_t min_blocks = rows * cols > 65536 ? 0 : blocks;
  parallel_spans(blocks, min_blocks, [&](int64_t begin, int64_t end) {
    for (int64_t blk = begin; blk < end; ++blk) {
      const int64_t j0 = blk * kColumnBlock;
      column_sums_block(dy, rows, cols, j0, std::min(kColumnBlock, cols - j0), db);
    }
  });
}

}  // namespace tn
