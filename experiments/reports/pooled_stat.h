#pragma once
// Mean, sample standard deviation and count of the values pooled into one row of a report.
#include <cstddef>
#include <vector>

namespace tn {

struct PooledStat {
  double mean = 0;  // NaN when n == 0
  double std = 0;   // sample standard deviation (n - 1); NaN when n < 2
  size_t n = 0;
  bool has_mean() const { return n > 0; }
  bool has_std() const { return n > 1; }
};

/// The pooled statistics of `values` (all of them, non-finite ones included: a NaN propagates).
PooledStat pool(const std::vector<double>& values);

}  // namespace tn
