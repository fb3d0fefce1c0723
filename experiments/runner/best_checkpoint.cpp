#include "experiments/runner/best_checkpoint.h"

#include <cmath>

#include <spdlog/fmt/fmt.h>

#include "core/error.h"

namespace tn {

BestCheckpoint::BestCheckpoint(const TrainSpec& train)
    : metric_(train.checkpoint.best_metric), maximize_(train.checkpoint.maximize), patience_(train.patience) {}

bool BestCheckpoint::observe(const Metrics& valid, int64_t step) {
  if (!enabled()) return false;
  const std::string name = metric_.substr(metric_.find('.') + 1);
  const std::optional<double> v = valid.find(name);
  if (!v) {
    std::string have;
    for (const std::string& n : valid.names()) have += (have.empty() ? "valid." : ", valid.") + n;
    throw ConfigError("train.checkpoint.best_metric: " + metric_ + " is not a metric of this task's validation; it has " +
                      have);
  }
  // A non-finite value (an evaluation that overflowed) is never the best, nor the first.
  const bool better = std::isfinite(*v) && (step_ == 0 || (maximize_ ? *v > value_ : *v < value_));
  if (better) {
    value_ = *v;
    step_ = step;
    bad_evals_ = 0;
  } else {
    ++bad_evals_;
  }
  return better;
}

std::string BestCheckpoint::describe() const {
  return fmt::format("{} {:.6g} at step {} ({})", metric_, value_, step_, maximize_ ? "max" : "min");
}

nlohmann::json BestCheckpoint::state() const {
  if (!enabled()) return nullptr;
  return {{"value", value_}, {"step", step_}, {"bad_evals", bad_evals_}};
}

void BestCheckpoint::restore(const nlohmann::json& state) {
  if (!enabled() || !state.is_object()) return;
  value_ = state.value("value", 0.0);
  step_ = state.value("step", int64_t{0});
  bad_evals_ = state.value("bad_evals", int64_t{0});
}

nlohmann::json BestCheckpoint::summary() const {
  if (!enabled() || step_ == 0) return nullptr;
  return {{"metric", metric_}, {"mode", maximize_ ? "max" : "min"}, {"value", value_}, {"step", step_}};
}

}  // namespace tn
