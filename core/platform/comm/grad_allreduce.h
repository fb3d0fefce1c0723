#pragma once
// Sums the gradients of a model's parameters across the ranks of a data-parallel job, in buckets
// of at most Communicator::kMaxSumFloats floats packed into one buffer kept from step to step (no
// allocation after the first step; Open MPI's cost per call jumps above about 16 MB, and packing
// many small tensors into one call saves the per-call latency).
#include <string>
#include <utility>
#include <vector>

#include "core/runtime/autograd/tape.h"
#include "core/platform/comm/communicator.h"

namespace tn {

class GradAllreduce {
 public:
  /// `params` (name, variable) in the same order on every rank; they must outlive this object.
  GradAllreduce(std::vector<std::pair<std::string, Var>> params, Communicator& comm);

  /// Sums every parameter's gradient across ranks in place. A parameter that has a gradient on
  /// some rank gets one on every rank (zeros where it had none); one that has none anywhere keeps
  /// none, as in one process. Returns the seconds spent communicating.
  double run();

 private:
  /// Sums the packed bucket [0, filled) and unpacks it into members_.
  void flush(int64_t filled);

  std::vector<std::pair<std::string, Var>> params_;
  Communicator& comm_;
  std::vector<float> bucket_;
  std::vector<int64_t> has_grad_;
  std::vector<Var*> members_;  // the parameters packed in the bucket, in order
};

}  // namespace tn
