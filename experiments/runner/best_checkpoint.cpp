#include "experiments/runner/best_checkpoint.h"

#include <algorithm>
#include <cmath>

#include <spdlog/fmt/fmt.h>

#include "core/error.h"

namespace tn {

namespace {
/// "valid.loss, valid.ppl, ...": the validation metrics a best_metric may name, for its errors.
std::string valid_metric_list(const std::vector<std::string>& names) {
  std::string have;
  for (const std::string& n : names) have += (have.empty() ? "valid." : ", valid.") + n;
  return have;
}
}  // namespace

std::string check_validation_plan(const Task& task, const TrainSpec& train, const std::string& spec_path) {
  const bool has_valid = task.has_split(Task::kValid);
  const std::string& metric = train.checkpoint.best_metric;
  if (!metric.empty()) {
    if (!has_valid)
      throw ConfigError(spec_path + ": train.checkpoint.best_metric: " + metric +
                        " needs a validation split, and the data gives none; set one (data.valid, or "
                        "data.split_valid_from_train for a text), or remove train.checkpoint");
    const std::vector<std::string> names = task.metric_names();
    const std::string name = metric.substr(metric.find('.') + 1);
    if (std::find(names.begin(), names.end(), name) == names.end())
      throw ConfigError(spec_path + ": train.checkpoint.best_metric: " + metric +
                        " is not a metric of this task's validation; it has " + valid_metric_list(names));
  }
  if (!has_valid && train.eval_every > 0)
    return "train.eval_every=" + std::to_string(train.eval_every) +
           ": the data has no validation split, so no validation runs (and no checkpoint is written before "
           "the end); set data.valid (or data.split_valid_from_train for a text) to validate";
  return "";
}

BestCheckpoint::BestCheckpoint(const TrainSpec& train)
    : metric_(train.checkpoint.best_metric), maximize_(train.checkpoint.maximize), patience_(train.patience) {}

bool BestCheckpoint::observe(const Metrics& valid, int64_t step) {
  if (!enabled()) return false;
  const std::string name = metric_.substr(metric_.find('.') + 1);
  const std::optional<double> v = valid.find(name);
  if (!v)
    throw ConfigError("train.checkpoint.best_metric: " + metric_ + " is not a metric of this task's validation; it has " +
                      valid_metric_list(valid.names()));
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
