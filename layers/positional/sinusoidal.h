#pragma once
#include "core/tensor.h"

namespace tn {

/// fairseq sinusoidal positions (docs/model.md §1) for tokens 0..n−1 at
/// positions offset..offset+n−1: half = d/2, freq_i = exp(−i·ln(10000)/(half−1)),
/// row = [sin(p·freq), cos(p·freq)] (halves concatenated), a zero column when d is odd.
/// Computed in double, returned as f32 [n, d].
Tensor sinusoidal_table(int64_t n, int64_t d, int64_t offset = 2);

}  // namespace tn
