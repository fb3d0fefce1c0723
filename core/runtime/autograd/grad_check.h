#pragma once
// Finite-difference gradient checking for ops and whole modules (tests only).
#include <functional>
#include <string>
#include <vector>

#include "core/runtime/autograd/tape.h"

namespace tn {

/// Scalar Σ x ⊙ weights, with backward (a random projection that turns any output into a loss).
Var weighted_sum(Tape& tape, const Var& x, const Tensor& weights);

/// A loss as grad_check reads it: the scalar Var to differentiate, and its value in double. A bare
/// Var converts to one with the Var's f32 value; an op that sums in double can hand over that sum
/// (weighted_loss, an LmLoss's sum_nll / n_targets), so that the finite differences are not
/// limited by the f32 rounding of the loss (2^-24·|L| per evaluation).
struct CheckLoss {
  Var var;
  double value;
  CheckLoss(Var v);  // implicit, so that loss functions returning a Var can be checked
  CheckLoss(Var v, double precise) : var(std::move(v)), value(precise) {}
};

/// weighted_sum, with the sum in double as the value.
CheckLoss weighted_loss(Tape& tape, const Var& x, const Tensor& weights);

struct GradCheckResult {
  double max_rel_error = 0;  // max over checked entries of |analytic − numeric| / max(|numeric|, floor)
  std::string worst;         // "input 1 [17]: analytic 0.12 numeric 0.13"
};

/// How grad_check differentiates numerically.
struct GradCheckOptions {
  double eps = 1e-2;        // the step (the largest offset from the input)
  int max_entries = 24;     // entries checked per input, evenly spaced
  double floor = 1e-2;      // relative errors are taken against max(|numeric|, floor)
  bool richardson = false;  // (4·D(eps/2) − D(eps)) / 3 instead of D(eps): error O(eps⁴), not O(eps²)
};

/// Compares the tape's gradients of `loss_fn(inputs)` with central differences D(h) = (L(x + h) −
/// L(x − h)) / (2h) on up to `max_entries` entries of each input (2h is the step the f32 input
/// actually took). Inputs must require grad. The numeric side has two errors: truncation,
/// O(h²·L‴) (O(h⁴) with richardson), and the rounding noise of the f32 forward over the step,
/// about 2^-24·|L|/h when the loss is rounded to f32, and only 2^-24·|the outputs the entry
/// moves|/h with the loss in double (CheckLoss). With the loss in double, richardson and a step of
/// a few 1e-2, both stay below 1e-3 of the gradient for the core ops (tests/core/test_ops_grad.cpp).
GradCheckResult grad_check(const std::function<CheckLoss(Tape&)>& loss_fn,
                           const std::vector<Var>& inputs, const GradCheckOptions& options);

/// The same with plain central differences of step `eps`.
GradCheckResult grad_check(const std::function<CheckLoss(Tape&)>& loss_fn,
                           const std::vector<Var>& inputs, double eps = 1e-2,
                           int max_entries = 24, double floor = 1e-2);

}  // namespace tn
