#pragma once
// Learning-rate schedules with fairseq's exact formulas (the PyTorch reference's lr_inverse_sqrt,
// lr_polynomial_decay, lr_cosine_with_warmup, lr_at).
// Golden values: tests/golden/lr_schedules.json.
#include <cstdint>

namespace tn {

enum class ScheduleKind {
  InverseSqrt,      // fairseq inverse_sqrt: linear warmup from warmup_init_lr, then peak*sqrt(warmup/step)
  PolynomialDecay,  // fairseq polynomial_decay: linear warmup from 0, then (peak-end)*(1-p)^power+end
  Cosine,           // transformers.get_cosine_schedule_with_warmup (num_cycles 0.5) times peak_lr
  Constant,         // peak_lr at every step
};

/// One schedule with its parameters. Learning rates are absolute (not factors of peak_lr); steps
/// count optimizer updates. Build it with experiments/spec/spec's make_schedule, which validates
/// (InverseSqrt needs warmup_steps >= 1); fields a kind does not use are ignored.
struct LrSchedule {
  ScheduleKind kind = ScheduleKind::InverseSqrt;
  double peak_lr = 5e-4;          // the optimizer's lr
  int64_t warmup_steps = 4000;    // InverseSqrt (>= 1), PolynomialDecay, Cosine (0: no warmup)
  double warmup_init_lr = 1e-7;   // InverseSqrt: lr(0)
  int64_t total_steps = 0;        // PolynomialDecay, Cosine: the step where the decay ends
  double end_lr = 0;              // PolynomialDecay: lr from total_steps on
  double power = 1;               // PolynomialDecay exponent

  /// fairseq convention: lr(step) = step_update(num_updates=step), the rate in effect after `step`
  /// updates; update k (1-based) uses lr(k-1), so the first update uses lr(0) (= warmup_init_lr
  /// for InverseSqrt, 0 for PolynomialDecay and Cosine). step >= 0. Bit-identical to the
  /// reference's Python (same operations in the same order, libm pow/cos).
  double lr(int64_t step) const;
};

}  // namespace tn
