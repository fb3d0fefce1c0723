#include "experiments/runner/train_log.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>

namespace tn {

void TrainLog::add(const StepResult& step, double seconds) {
  seconds_ += seconds;
  tokens_ += step.positions;
  targets_ += step.targets;
  loss_ += step.loss_sum;
}

TrainRecord TrainLog::flush(int64_t step, double epochs, const StepResult& last, double train_s) {
  TrainRecord r{step, epochs, loss_ / static_cast<double>(targets_), last.lr, last.grad_norm, tokens_ / seconds_, train_s};
  const double eta = train_s / step * (max_steps_ - step);
  spdlog::info("step {:>6}/{} | epoch {:.2f} | loss {:.4f} | lr {:.3e} | gnorm {:.3f} | {:.0f} tok/s | ETA {}", step,
               max_steps_, epochs, r.loss, r.lr, r.grad_norm, r.tokens_per_s, format_duration(eta));
  loss_ = 0;
  tokens_ = 0;
  targets_ = 0;
  seconds_ = 0;
  return r;
}

nlohmann::json TrainLog::window_json() const {
  return {{"loss_sum", loss_}, {"tokens", tokens_}, {"targets", targets_}, {"seconds", seconds_}};
}

void TrainLog::restore_window(const nlohmann::json& window) {
  if (window.is_null()) return;
  loss_ = window.at("loss_sum").get<double>();
  tokens_ = window.at("tokens").get<int64_t>();
  // Written before inputs and targets were counted apart, the two were the same.
  targets_ = window.contains("targets") ? window.at("targets").get<int64_t>() : tokens_;
  seconds_ = window.at("seconds").get<double>();
}

}  // namespace tn
