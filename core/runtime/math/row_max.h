#pragma once
// Vectorised maximum of a float row. `#pragma omp simd reduction(max:)` over std::max compiles
// to a dependent chain here (4x slower than memory bandwidth on a 50k-wide row); 16 independent
// lanes, the lane loop marked simd, let GCC keep one AVX-512 register of running maxima instead
// (unmarked, -O3 unrolled it into 16 scalar chains inside the cloned cross-entropy row).
#include <algorithm>
#include <cstdint>
#include <limits>

namespace tn {

/// max_j x[j] over n >= 0 values (−inf when n = 0). NaNs are skipped unless all are NaN (then
/// −inf): callers take it as a softmax shift, where a NaN logit makes the loss NaN anyway.
inline float row_max(const float* x, int64_t n) {
  constexpr int kLanes = 16;
  float lane[kLanes], lane2[kLanes], lane3[kLanes], lane4[kLanes];
  for (int l = 0; l < kLanes; ++l)
    lane[l] = lane2[l] = lane3[l] = lane4[l] = -std::numeric_limits<float>::infinity();
  int64_t j = 0;
  // Four sets of lanes side by side: one AVX-512 max a cycle instead of one per max latency. The
  // max is exact, so the result does not depend on how the lanes split the row.
  for (; j + 4 * kLanes <= n; j += 4 * kLanes) {
#pragma omp simd
    for (int l = 0; l < kLanes; ++l) {
      lane[l] = x[j + l] > lane[l] ? x[j + l] : lane[l];
      lane2[l] = x[j + kLanes + l] > lane2[l] ? x[j + kLanes + l] : lane2[l];
      lane3[l] = x[j + 2 * kLanes + l] > lane3[l] ? x[j + 2 * kLanes + l] : lane3[l];
      lane4[l] = x[j + 3 * kLanes + l] > lane4[l] ? x[j + 3 * kLanes + l] : lane4[l];
    }
  }
#pragma omp simd
  for (int l = 0; l < kLanes; ++l) {
    const float a = lane[l] > lane2[l] ? lane[l] : lane2[l];
    const float b = lane3[l] > lane4[l] ? lane3[l] : lane4[l];
    lane[l] = a > b ? a : b;
  }
  for (; j + kLanes <= n; j += kLanes) {
#pragma omp simd  // without it GCC -O3 unrolls the lanes into 16 scalar max chains
    for (int l = 0; l < kLanes; ++l) lane[l] = x[j + l] > lane[l] ? x[j + l] : lane[l];
  }
  // The lanes hold no NaN (a NaN never wins a comparison above), so halving them in a tree gives
  // the same maximum in four steps instead of a chain of sixteen (short rows: Performer's 16).
  for (int half = kLanes / 2; half >= 1; half /= 2) {
#pragma omp simd
    for (int l = 0; l < half; ++l) lane[l] = lane[l + half] > lane[l] ? lane[l + half] : lane[l];
  }
  float mx = lane[0];
  for (; j < n; ++j) mx = x[j] > mx ? x[j] : mx;
  return mx;
}

}  // namespace tn
