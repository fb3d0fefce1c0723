#pragma once
#include "core/autograd/tape.h"
#include "core/rng.h"

namespace tn {

/// a + b, same shapes (residual connections).
Var add(Tape& tape, const Var& a, const Var& b);
/// a ⊙ b, same shapes (the GLU gate).
Var mul(Tape& tape, const Var& a, const Var& b);
/// alpha · x.
Var scale(Tape& tape, const Var& x, float alpha);
/// Inverted dropout: zeroes each entry with probability p, scales survivors by 1/(1−p).
/// Identity (returns x itself) when p == 0 or training is false. Mask drawn from rng.
Var dropout(Tape& tape, const Var& x, float p, bool training, Rng& rng);

}  // namespace tn
