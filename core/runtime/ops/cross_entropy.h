#pragma once
#include <vector>

#include "core/runtime/autograd/tape.h"
#include "core/runtime/ops/lm_head_loss.h"

namespace tn {

/// Mean cross-entropy (nats) of logits [N, C] against targets (N ids in [0, C), or kIgnoreIndex),
/// over the non-ignored rows (PyTorch F.cross_entropy). For classification heads; LM heads use
/// the chunked lm_head_cross_entropy. Throws ShapeError for a target outside [0, C).
LmLoss cross_entropy(Tape& tape, const Var& logits, const std::vector<int32_t>& targets);

}  // namespace tn
