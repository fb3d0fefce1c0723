#include "layers/positional/sinusoidal.h"

#include <cmath>

#include "core/error.h"

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

Tensor interleaved_sinusoidal_table(int64_t n, int64_t d, int64_t offset) {
  Tensor table = Tensor::zeros({n, d});
  const double step = -std::log(10000.0) / static_cast<double>(d);
  for (int64_t t = 0; t < n; ++t) {
    const double p = static_cast<double>(t + offset);
    float* row = table.data() + t * d;
    for (int64_t j = 0; j < d; j += 2) {
      const double angle = p * std::exp(static_cast<double>(j) * step);
      row[j] = static_cast<float>(std::sin(angle));
      if (j + 1 < d) row[j + 1] = static_cast<float>(std::cos(angle));
    }
  }
  return table;
}

Tensor fixed_position_table(Positional kind, int64_t n, int64_t d, int64_t first) {
  if (kind == Positional::Sinusoidal) return sinusoidal_table(n, d, first + 2);
  if (kind == Positional::SinusoidalInterleaved) return interleaved_sinusoidal_table(n, d, first);
  throw ConfigError("[fixed_position_table] positional: " + to_string(kind) + " has no fixed table");
}

}  // namespace tn
