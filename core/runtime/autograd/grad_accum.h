#pragma once
// Gradient accumulation helper for op backwards: write straight into a variable's gradient when it
// has none yet (no zero-fill, no extra add), else into a scratch tensor that is then added.
#include "core/runtime/autograd/tape.h"

namespace tn {

class GradSink {
 public:
  /// Prepares to deliver a gradient into v (v must require grad); a Var converts to its GradRef.
  explicit GradSink(const GradRef& v);
  /// Destination buffer, same shape as v's value; to be fully overwritten by the caller.
  float* data() { return dst_; }
  /// Adds the scratch into v's gradient when one already existed.
  void commit();
  ~GradSink();

 private:
  GradRef var_;
  Tensor scratch_;
  float* dst_ = nullptr;
  bool committed_ = false;
};

/// For an op that can write or accumulate its result itself (a matmul with the sum post-op):
/// v's gradient buffer, allocated uninitialised when v has none yet (accumulate = false: overwrite
/// it, no zero-fill) or the existing one (accumulate = true: add into it, no scratch).
float* grad_destination(const GradRef& v, bool& accumulate);

/// db[j] += Σ_i dy[i·cols + j]: a bias gradient, the column sums of dy [rows, cols]. Threads split
/// the columns into blocks of 64, each walks every row with a contiguous, vectorised inner loop.
void add_column_sums(const float* dy, int64_t rows, int64_t cols, float* db);

/// y += x elementwise over n floats (threaded).
void add_inplace(float* y, const float* x, int64_t n);

}  // namespace tn
