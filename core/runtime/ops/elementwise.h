#pragma once
#include "core/runtime/autograd/tape.h"
#include "core/runtime/rng.h"

namespace tn {

/// a + b, same shapes (residual connections).
Var add(Tape& tape, const Var& a, const Var& b);
/// a ⊙ b, same shapes (the GLU gate).
Var mul(Tape& tape, const Var& a, const Var& b);
/// alpha · x.
Var scale(Tape& tape, const Var& x, float alpha);
/// Inverted dropout: zeroes each entry with probability p, scales survivors by 1/(1−p).
/// Identity (returns x itself) when p == 0 or training is false. The mask comes from one key of
/// rng (counter_uniform per entry) and is regenerated in the backward, not stored.
Var dropout(Tape& tape, const Var& x, float p, bool training, Rng& rng);
/// base + dropout(x, p): a residual connection in one pass (no separate dropout output, no mask),
/// the same values as add(base, dropout(x)) up to the rounding of one fused multiply-add; the same
/// key drawn from rng. add(base, x) when p == 0 or training is false. Same shapes.
Var add_dropout(Tape& tape, const Var& base, const Var& x, float p, bool training, Rng& rng);

}  // namespace tn
