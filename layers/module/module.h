#pragma once
// What every layer's forward sees: the tape, train/eval mode, the dropout RNG, and an optional
// key-padding mask. Layers register parameters in a ParamStore at construction (layers/module/param_store.h).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/runtime/autograd/tape.h"
#include "core/error.h"
#include "core/runtime/rng.h"

namespace tn {

class ScoreProbe;

class Communicator;

struct ForwardContext {
  Tape& tape;
  bool training = false;
  Rng& rng;
  /// [batch * seq_len], 1 = real token, 0 = padding; null means every position is real.
  const std::vector<uint8_t>* key_valid = nullptr;
  /// Set by the gradient analysis (layers/attention/score_tap.h): each attention layer reports its
  /// scores' inputs. Null (the default) costs nothing.
  ScoreProbe* score_probe = nullptr;
  /// The ranks whose BatchNorm training statistics are combined (SyncBatchNorm, core/runtime/ops/batch_norm.h);
  /// null (the default): this process's batch alone. Set by the data-parallel training step.
  Communicator* batch_stats_ranks = nullptr;
};

/// What a causal token mixer carries from one decoded token to the next (one sequence, batch 1):
/// a recurrent kv_state (NormAttention, linear, Performer), a KV cache (softmax; DiagAttention's
/// current block) or the prefix itself (cosFormer). Made by TokenMixer::start_decode().
class DecodeState {
 public:
  virtual ~DecodeState() = default;
  /// Bytes of state held now, reserved capacity included (constant in the position for
  /// NormAttention, linear, Performer and DiagAttention; growing for softmax and cosFormer).
  virtual int64_t size_bytes() const = 0;
  /// The position the next decode_step must be given: the number of tokens consumed so far.
  int64_t next_position() const { return next_position_; }
  /// Throws ShapeError "[op] ..." unless position == next_position() (tokens go in order from 0),
  /// then advances by one.
  void advance(const char* op, int64_t position) {
    if (position != next_position_)
      throw ShapeError(std::string("[") + op + "] positions must be fed in order from 0: expected " +
                       std::to_string(next_position_) + ", got " + std::to_string(position));
    ++next_position_;
  }

 private:
  int64_t next_position_ = 0;
};

/// A token mixer (attention variant): [batch, seq_len, d_model] → same shape.
class TokenMixer {
 public:
  virtual ~TokenMixer() = default;
  virtual Var forward(ForwardContext& ctx, const Var& x) = 0;

  /// A fresh incremental-decoding state (empty context) for one sequence. Throws ConfigError for a
  /// bidirectional (encoder) mixer or one without an incremental form (the default).
  virtual std::unique_ptr<DecodeState> start_decode() const {
    throw ConfigError("[start_decode] this token mixer has no incremental decoding form");
  }
  /// One causal step (batch 1): x [1, 1, d_model] is the mixer input at `position` (0, 1, 2, ...
  /// in order, checked by the state) → the output row [1, 1, d_model], equal to forward() over the
  /// whole prefix 0..position at its last row (to float tolerance). Updates `state`, which must
  /// come from this mixer's start_decode(). Meant for eval mode with the tape disabled.
  virtual Var decode_step(ForwardContext& /*ctx*/, DecodeState& /*state*/, const Var& /*x*/,
                          int64_t /*position*/) {
    throw ConfigError("[decode_step] this token mixer has no incremental decoding form");
  }
};

/// `state` as the concrete type T a mixer's start_decode() made; ShapeError naming `op` otherwise.
template <class T>
T& decode_state_as(DecodeState& state, const char* op) {
  T* typed = dynamic_cast<T*>(&state);
  if (!typed)
    throw ShapeError(std::string("[") + op + "] the state was not made by this mixer's start_decode()");
  return *typed;
}

/// Throws ShapeError "[op] ..." unless x is one row [1, 1, d_model] (incremental decoding input).
inline void check_decode_row(const char* op, const Var& x, int64_t d_model) {
  const Tensor& t = x->value;
  if (t.ndim() != 3 || t.dim(0) != 1 || t.dim(1) != 1 || t.dim(2) != d_model)
    throw ShapeError(std::string("[") + op + "] expected x [1, 1, " + std::to_string(d_model) +
                     "], got " + shape_str(t.shape()));
}

/// A channel mixer (GLU, FFN): [..., d_model] → same shape.
class ChannelMixer {
 public:
  virtual ~ChannelMixer() = default;
  virtual Var forward(ForwardContext& ctx, const Var& x) = 0;
};

}  // namespace tn
