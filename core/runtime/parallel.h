#pragma once
// When our own element-wise loops go parallel (OpenMP `if` clauses).
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tn {

/// Element count (floats, or rows × width) from which a simple pass over memory runs on the OpenMP
/// team instead of the calling thread. 32768 floats are 128 KiB: a pass that small takes a few
/// microseconds, the same order as waking the team and joining it, so splitting it gains nothing
/// and adds jitter. The value is a round power of two of that order, used unchanged since the
/// first core ops, not tuned loop by loop. Loops whose work per element differs keep their own
/// threshold (AdamW's update, bias_grad, some attention kernels).
inline constexpr int64_t kParallelMinElements = 32768;

/// Rows of `width` floats from which a row-wise pass runs on the team: kParallelMinElements
/// floats' worth (the min_elements of parallel_spans over rows).
inline int64_t parallel_min_rows(int64_t width) {
  return kParallelMinElements / (width > 0 ? width : 1);
}

/// fn(begin, end) over [0, n) split into one contiguous span per OpenMP thread (the split of
/// `schedule(static)`), or fn(0, n) on the calling thread when n <= min_elements. For loops whose
/// body is a function compiled per instruction set (core/runtime/math/isa_clones.h), which an OpenMP
/// region cannot be.
template <class Fn>
void parallel_spans(int64_t n, int64_t min_elements, Fn&& fn) {
  if (n <= min_elements) {
    fn(int64_t{0}, n);
    return;
  }
#pragma omp parallel
  {
    const int64_t t = omp_get_thread_num(), threads = omp_get_num_threads();
    fn(n * t / threads, n * (t + 1) / threads);
  }
}

/// Σ fn(begin, end) over [0, n) cut into chunks of `chunk` elements (the last one shorter), fn
/// returning a double: the chunks run in parallel (OpenMP) when there is more than one, and their
/// sums are added in chunk order. The chunks depend on n and `chunk` only, so the sum has the same
/// bits on any thread count (a reduction over per-thread spans would not). For sums whose per-chunk
/// body is compiled per instruction set.
template <class Fn>
double parallel_sum(int64_t n, int64_t chunk, Fn&& fn) {
  if (n <= chunk) return fn(int64_t{0}, n);
  const int64_t chunks = (n + chunk - 1) / chunk;
  std::vector<double> sums(static_cast<size_t>(chunks));
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c)
    sums[static_cast<size_t>(c)] = fn(c * chunk, std::min(n, (c + 1) * chunk));
  double total = 0.0;
  for (const double s : sums) total += s;
  return total;
}

}  // namespace tn
