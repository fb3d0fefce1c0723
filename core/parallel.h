#pragma once
// When our own element-wise loops go parallel (OpenMP `if` clauses).
#include <cstdint>

namespace tn {

/// Element count (floats, or rows × width) from which a simple pass over memory runs on the OpenMP
/// team instead of the calling thread. 32768 floats are 128 KiB: a pass that small takes a few
/// microseconds, the same order as waking the team and joining it, so splitting it gains nothing
/// and adds jitter. The value is a round power of two of that order, used unchanged since the
/// first core ops, not tuned loop by loop. Loops whose work per element differs keep their own
/// threshold (AdamW's update, bias_grad, some attention kernels).
inline constexpr int64_t kParallelMinElements = 32768;

}  // namespace tn
