#pragma once
#include <vector>

#include "core/runtime/autograd/tape.h"
#include "core/runtime/ops/lm_head_loss.h"

namespace tn {

/// Mean squared error of predictions [N] or [N, 1] against N float targets: loss = Σ (p − t)² / N,
/// the regression loss of a sentence-prediction head (fairseq's sentence_prediction with
/// regression_target: mse_loss summed, divided by the sentences). The returned LmLoss carries the
/// sum in double (sum_nll) and N (n_targets). Throws ShapeError when the sizes differ or N = 0.
LmLoss mse_loss(Tape& tape, const Var& predictions, const std::vector<float>& targets);

}  // namespace tn
