#pragma once
// What every layer's forward sees: the tape, train/eval mode, the dropout RNG, and an optional
// key-padding mask. Layers register parameters in a ParamStore at construction (layers/param_store.h).
#include <cstdint>
#include <vector>

#include "core/autograd/tape.h"
#include "core/rng.h"

namespace tn {

struct ForwardContext {
  Tape& tape;
  bool training = false;
  Rng& rng;
  /// [batch * seq_len], 1 = real token, 0 = padding; null means every position is real.
  const std::vector<uint8_t>* key_valid = nullptr;
};

/// A token mixer (attention variant): [batch, seq_len, d_model] → same shape.
class TokenMixer {
 public:
  virtual ~TokenMixer() = default;
  virtual Var forward(ForwardContext& ctx, const Var& x) = 0;
};

/// A channel mixer (GLU, FFN): [..., d_model] → same shape.
class ChannelMixer {
 public:
  virtual ~ChannelMixer() = default;
  virtual Var forward(ForwardContext& ctx, const Var& x) = 0;
};

}  // namespace tn
