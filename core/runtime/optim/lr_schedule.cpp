#include "core/runtime/optim/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace tn {

namespace {

// Each function repeats the reference's expression term by term (Python floats are IEEE doubles,
// `a ** b` is libm pow), so results agree to the last bit.

double lr_inverse_sqrt(int64_t step, double peak, int64_t warmup, double warmup_init_lr) {
  if (step < warmup)
    return warmup_init_lr + static_cast<double>(step) * ((peak - warmup_init_lr) / static_cast<double>(warmup));
  return (peak * std::pow(static_cast<double>(warmup), 0.5)) * std::pow(static_cast<double>(step), -0.5);
}

double lr_polynomial_decay(int64_t step, double peak, int64_t warmup, int64_t total, double end_lr,
                           double power) {
  if (warmup > 0 && step <= warmup) return (static_cast<double>(step) / static_cast<double>(warmup)) * peak;
  if (step >= total) return end_lr;
  const double pct_remaining =
      1.0 - static_cast<double>(step - warmup) / static_cast<double>(total - warmup);
  return (peak - end_lr) * std::pow(pct_remaining, power) + end_lr;
}

double lr_cosine_with_warmup(int64_t step, double peak, int64_t warmup, int64_t total) {
  constexpr double num_cycles = 0.5;
  if (step < warmup)
    return peak * (static_cast<double>(step) / static_cast<double>(std::max<int64_t>(1, warmup)));
  const double progress =
      static_cast<double>(step - warmup) / static_cast<double>(std::max<int64_t>(1, total - warmup));
  return peak * std::max(0.0, 0.5 * (1.0 + std::cos(std::numbers::pi * num_cycles * 2.0 * progress)));
}

}  // namespace

double LrSchedule::lr(int64_t step) const {
  switch (kind) {
    case ScheduleKind::InverseSqrt: return lr_inverse_sqrt(step, peak_lr, warmup_steps, warmup_init_lr);
    case ScheduleKind::PolynomialDecay:
      return lr_polynomial_decay(step, peak_lr, warmup_steps, total_steps, end_lr, power);
    case ScheduleKind::Cosine: return lr_cosine_with_warmup(step, peak_lr, warmup_steps, total_steps);
    case ScheduleKind::Constant: return peak_lr;
  }
  return peak_lr;
}

}  // namespace tn
