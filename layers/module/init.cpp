#include "layers/module/init.h"

#include <cmath>

namespace tn {

void uniform_init(Tensor& t, double bound, Rng& rng) {
  float* p = t.data();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<float>((2 * rng.uniform() - 1) * bound);
}

void xavier_uniform(Tensor& weight, double gain, Rng& rng) {
  const double fan_out = static_cast<double>(weight.dim(0)), fan_in = static_cast<double>(weight.dim(1));
  uniform_init(weight, gain * std::sqrt(6.0 / (fan_in + fan_out)), rng);
}

void linear_default(Tensor& weight, Tensor* bias, Rng& rng) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(weight.dim(1)));
  uniform_init(weight, bound, rng);
  if (bias) uniform_init(*bias, bound, rng);
}

void normal_init(Tensor& t, double stddev, Rng& rng) {
  float* p = t.data();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<float>(rng.normal() * stddev);
}

}  // namespace tn
