#pragma once
// Parameter initialisation (docs/model.md §13: the official code's language-model init).
#include "core/runtime/rng.h"
#include "core/runtime/tensor.h"

namespace tn {

/// U(−a, a) with a = gain·√(6 / (fan_in + fan_out)); weight is [fan_out, fan_in] (PyTorch).
void xavier_uniform(Tensor& weight, double gain, Rng& rng);
/// PyTorch nn.Linear default: weight and bias U(±1/√fan_in).
void linear_default(Tensor& weight, Tensor* bias, Rng& rng);
/// N(0, std²).
void normal_init(Tensor& t, double stddev, Rng& rng);
/// U(−bound, bound).
void uniform_init(Tensor& t, double bound, Rng& rng);

}  // namespace tn
