#pragma once
// Small summaries of repeated measurements (timings of bench and of the matmul probe).
#include <algorithm>
#include <vector>

namespace tn {

/// Median of v (the mean of the two middle values for an even count; 0 when empty).
inline double median_of(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : 0.5 * (v[mid - 1] + v[mid]);
}

}  // namespace tn
