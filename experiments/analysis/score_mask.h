#pragma once
// Which keys a tapped attention row may see, shared by the gradient statistics and the locality
// analysis: the causal mask, DiagAttention's blocks, and padded keys.
#include <cstdint>

#include "layers/attention/score_tap.h"

namespace tn {

/// Whether query i of sample b may attend to key j in `tap` (seq positions per sample).
inline bool key_visible(const ScoreTap& tap, int64_t b, int64_t seq, int64_t i, int64_t j) {
  if (tap.causal && j > i) return false;
  if (tap.block > 0 && i / tap.block != j / tap.block) return false;
  return !tap.key_valid || (*tap.key_valid)[b * seq + j];
}

}  // namespace tn
