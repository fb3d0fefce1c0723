#pragma once
#include "core/runtime/tensor.h"
#include "layers/config/model_config.h"

namespace tn {

/// fairseq sinusoidal positions (docs/model.md §1) for tokens 0..n−1 at
/// positions offset..offset+n−1: half = d/2, freq_i = exp(−i·ln(10000)/(half−1)),
/// row = [sin(p·freq), cos(p·freq)] (halves concatenated), a zero column when d is odd.
/// Computed in double, returned as f32 [n, d].
Tensor sinusoidal_table(int64_t n, int64_t d, int64_t offset = 2);

/// The official LRA encoder's sinusoidal positions (OpenNLPLab/lra and state-spaces
/// `PositionalEncoder`; docs/model.md §1) for positions offset..offset+n−1:
/// row[2i] = sin(p·ω_i), row[2i+1] = cos(p·ω_i), ω_i = exp(−2i·ln(10000)/d) (interleaved, p from 0);
/// an odd d ends with a sine column. Computed in double, returned as f32 [n, d].
Tensor interleaved_sinusoidal_table(int64_t n, int64_t d, int64_t offset = 0);

/// The fixed absolute positions of a model for tokens first..first+n−1 [n, d]: fairseq's table
/// (Positional::Sinusoidal, token t at p = t + 2) or the interleaved one (t at p = t). Throws
/// ConfigError for a kind without a fixed table (learned, none).
Tensor fixed_position_table(Positional kind, int64_t n, int64_t d, int64_t first = 0);

}  // namespace tn
