#include "core/runtime/ops/embedding.h"

#include <algorithm>
#include <cstring>

#include "core/runtime/autograd/grad_accum.h"
#include "core/error.h"
#include "core/runtime/math/isa_clones.h"
#include "core/runtime/parallel.h"

namespace tn {
namespace {

/// Rows [begin, end) of the lookup: y_i = scale · table[ids[i]]. Compiled per instruction set.
TN_ISA_CLONES void lookup_rows(const float* __restrict table, const int32_t* __restrict ids,
                               int64_t d, float scale, float* __restrict y, int64_t begin,
                               int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    const float* row = table + static_cast<int64_t>(ids[i]) * d;
    float* out = y + i * d;
#pragma omp simd
    for (int64_t j = 0; j < d; ++j) out[j] = row[j] * scale;
  }
}

/// Columns [j0, j1) of the table's gradient: dt[ids[i], j] += scale · dy[i, j] over every row i,
/// in row order (rows with the same id meet in one column range, so a thread owns its columns).
/// Compiled per instruction set.
TN_ISA_CLONES void scatter_columns(const float* __restrict dy, const int32_t* __restrict ids,
                                   int64_t rows, int64_t d, float scale, float* __restrict dt,
                                   int64_t j0, int64_t j1) {
  for (int64_t i = 0; i < rows; ++i) {
    float* dst = dt + static_cast<int64_t>(ids[i]) * d;
    const float* src = dy + i * d;
#pragma omp simd
    for (int64_t j = j0; j < j1; ++j) dst[j] += src[j] * scale;
  }
}

}  // namespace

Var embedding(Tape& tape, const Var& table, const std::vector<int32_t>& ids, int64_t batch,
              int64_t seq_len, float scale) {
  const int64_t vocab = table->value.dim(0), d = table->value.dim(1);
  const int64_t n = batch * seq_len;
  if (static_cast<int64_t>(ids.size()) < n)
    throw ShapeError("[embedding] " + std::to_string(ids.size()) + " ids for " +
                     std::to_string(batch) + "x" + std::to_string(seq_len));
  for (int64_t i = 0; i < n; ++i)
    if (ids[i] < 0 || ids[i] >= vocab)
      throw ShapeError("[embedding] token id " + std::to_string(ids[i]) + " at position " +
                       std::to_string(i) + " is outside the vocabulary [0, " +
                       std::to_string(vocab) + ")");
  Tensor y = Tensor::empty({batch, seq_len, d});
  const float* tp = table->value.data();
  float* yp = y.data();
  const int32_t* idp = ids.data();
  parallel_spans(n, parallel_min_rows(d), [&](int64_t begin, int64_t end) {
    lookup_rows(tp, idp, d, scale, yp, begin, end);
  });
  Var result = make_var(std::move(y));
  if (!tape.needs_grad({&table})) return result;
  result->requires_grad = true;
  std::vector<int32_t> saved(ids.begin(), ids.begin() + n);
  tape.record([table, result, saved = std::move(saved), d, scale]() {
    if (!result->has_grad()) return;
    float* dt = table->grad_buf().data();
    const float* dy = result->grad().data();
    // Duplicate ids make rows collide, so split the work over columns (blocks of 16), not rows.
    const int64_t rows = static_cast<int64_t>(saved.size());
    const int64_t blocks = (d + 15) / 16;
    parallel_spans(blocks, rows * d > kParallelMinElements ? 0 : blocks, [&](int64_t b0, int64_t b1) {
      scatter_columns(dy, saved.data(), rows, d, scale, dt, b0 * 16, std::min(d, b1 * 16));
    });
  });
  return result;
}

Var add_positions(Tape& tape, const Var& x, const Var& positions) {
  const int64_t batch = x->value.dim(0), seq_len = x->value.dim(1), d = x->value.dim(2);
  if (positions->value.dim(0) < seq_len || positions->value.dim(1) != d)
    throw ShapeError("[add_positions] position table " + shape_str(positions->value.shape()) +
                     " cannot cover " + shape_str(x->value.shape()));
  Tensor y = Tensor::empty(x->value.shape());
  const float* xp = x->value.data();
  const float* pp = positions->value.data();
  float* yp = y.data();
  const int64_t per_batch = seq_len * d;
#pragma omp parallel for schedule(static) if (batch * per_batch > kParallelMinElements)
  for (int64_t b = 0; b < batch; ++b)
#pragma omp simd
    for (int64_t i = 0; i < per_batch; ++i) yp[b * per_batch + i] = xp[b * per_batch + i] + pp[i];
  Var result = make_var(std::move(y));
  if (!tape.needs_grad({&x, &positions})) return result;
  result->requires_grad = true;
  tape.record([x, positions, result, batch, per_batch]() {
    if (!result->has_grad()) return;
    const float* dy = result->grad().data();
    if (x->requires_grad) {
      GradSink dx(x);
      std::memcpy(dx.data(), dy, sizeof(float) * batch * per_batch);
    }
    if (positions->requires_grad) {
      float* dp = positions->grad_buf().data();
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t i = 0; i < per_batch; ++i) dp[i] += dy[b * per_batch + i];
    }
  });
  return result;
}

}  // namespace tn
