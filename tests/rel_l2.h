#pragma once
// ‖a − b‖ / ‖b‖ over n floats, in double: the relative error the bf16 tests bound.
#include <cmath>
#include <cstdint>

namespace tn::test {

inline double rel_l2(const float* a, const float* b, int64_t n) {
  double err = 0, norm = 0;
  for (int64_t i = 0; i < n; ++i) {
    err += double(a[i] - b[i]) * (a[i] - b[i]);
    norm += double(b[i]) * b[i];
  }
  return std::sqrt(err / norm);
}

}  // namespace tn::test
