#pragma once
// Finite-difference gradient checking for ops and whole modules (tests only).
#include <functional>
#include <string>
#include <vector>

#include "core/autograd/tape.h"

namespace tn {

/// Scalar Σ x ⊙ weights, with backward (a random projection that turns any output into a loss).
Var weighted_sum(Tape& tape, const Var& x, const Tensor& weights);

struct GradCheckResult {
  double max_rel_error = 0;  // max over checked entries of |analytic − numeric| / max(|numeric|, floor)
  std::string worst;         // "input 1 [17]: analytic 0.12 numeric 0.13"
};

/// Compares the tape's gradients of `loss_fn(inputs)` with central differences (step `eps`) on up
/// to `max_entries` entries of each input. Inputs must require grad. `floor` guards tiny gradients.
GradCheckResult grad_check(const std::function<Var(Tape&)>& loss_fn,
                           const std::vector<Var>& inputs, double eps = 1e-2,
                           int max_entries = 24, double floor = 1e-2);

}  // namespace tn
