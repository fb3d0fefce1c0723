#pragma once
#include <cstdint>
#include <vector>

#include "core/runtime/autograd/tape.h"

namespace tn {

/// Sequence pooling for classification heads: Mean over the real positions, First (position 0,
/// RoBERTa's <s>), Last (the last real position). x: [B, T, d] → [B, d]. key_valid: B·T flags
/// (1 real, 0 padding) or null (all real). Throws ShapeError when a row has no real position.
enum class PoolKind { Mean, First, Last };
Var sequence_pool(Tape& tape, const Var& x, PoolKind kind, const std::vector<uint8_t>* key_valid);

}  // namespace tn
