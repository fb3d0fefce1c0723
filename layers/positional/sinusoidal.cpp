#include "layers/positional/sinusoidal.h"

#include <cmath>

namespace tn {

Tensor sinusoidal_table(int64_t n, int64_t d, int64_t offset) {
  Tensor table = Tensor::zeros({n, d});
  const int64_t half = d / 2;
  const double step = half > 1 ? std::log(10000.0) / static_cast<double>(half - 1) : 0.0;
  for (int64_t t = 0; t < n; ++t) {
    const double p = static_cast<double>(t + offset);
    float* row = table.data() + t * d;
    for (int64_t i = 0; i < half; ++i) {
      const double angle = p * std::exp(-static_cast<double>(i) * step);
      row[i] = static_cast<float>(std::sin(angle));
      row[half + i] = static_cast<float>(std::cos(angle));
    }
  }
  return table;
}

}  // namespace tn
