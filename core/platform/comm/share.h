#pragma once
// Which part of n items a rank takes when work is shared out: the same cut for the training
// stream's batches (data/batching/batch_stream) and the evaluations (experiments/tasks).
#include <cstdint>

namespace tn {

/// The items [begin, end) of part `rank` of `world`: [rank·n/world, (rank+1)·n/world), so the parts
/// are contiguous, in rank order, cover all n, and differ in size by at most one.
struct Share {
  int64_t begin = 0, end = 0;
};
inline Share share_of(int64_t n, int rank, int world) { return {n * rank / world, n * (rank + 1) / world}; }

}  // namespace tn
