#pragma once
#include <cstdint>
#include <vector>

#include "core/runtime/autograd/tape.h"

namespace tn {

/// Picks rows of a matrix: x [..., d] read as [N, d] rows; out [rows.size(), d] with
/// out[i] = x[rows[i]]. Backward scatters (adds) each output row's gradient into its source row,
/// so a repeated index accumulates. This is how the masked-LM loss runs its head on the masked
/// positions only (fairseq's `masked_tokens`). Throws ShapeError for an index outside [0, N).
Var gather_rows(Tape& tape, const Var& x, const std::vector<int64_t>& rows);

}  // namespace tn
