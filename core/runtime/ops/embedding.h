#pragma once
#include <cstdint>
#include <vector>

#include "core/runtime/autograd/tape.h"

namespace tn {

/// x[b,t] = scale · table[ids[b,t]]. table: [vocab, d]; ids: batch·seq_len ids, row-major.
/// Returns [batch, seq_len, d]. Throws ShapeError naming the id when one is outside [0, vocab).
Var embedding(Tape& tape, const Var& table, const std::vector<int32_t>& ids, int64_t batch,
              int64_t seq_len, float scale);

/// x[b,t] += positions[t] for t < seq_len (broadcast over batch). x: [batch, seq_len, d],
/// positions: [≥ seq_len, d] (sinusoidal buffer or learned table; gets gradients if trainable).
Var add_positions(Tape& tape, const Var& x, const Var& positions);

}  // namespace tn
