#include "experiments/reports/pooled_stat.h"

#include <cmath>
#include <limits>

namespace tn {

PooledStat pool(const std::vector<double>& values) {
  PooledStat s;
  s.n = values.size();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  s.mean = s.std = nan;
  if (values.empty()) return s;
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(values.size());
  if (values.size() < 2) return s;
  double squares = 0;
  for (double v : values) squares += (v - s.mean) * (v - s.mean);
  s.std = std::sqrt(squares / static_cast<double>(values.size() - 1));
  return s;
}

}  // namespace tn
