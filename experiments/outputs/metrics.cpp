#include "experiments/outputs/metrics.h"

#include <limits>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tn {

bool lower_is_better(const std::string& metric) {
  const std::string name = metric.substr(metric.rfind('.') == std::string::npos ? 0 : metric.rfind('.') + 1);
  for (const char* low : {"loss", "ppl", "perplexity", "error", "bpc", "mse", "mae"})
    if (name == low || name.rfind(std::string(low) + "_", 0) == 0) return true;
  return false;
}

namespace {
constexpr const char* kStep = "step";
constexpr const char* kSplit = "split";
}  // namespace

void Metrics::set(const std::string& name, double value) {
  for (Entry& e : entries_)
    if (e.name == name) {
      e = {name, value, false};
      return;
    }
  entries_.push_back({name, value, false});
}

void Metrics::set_count(const std::string& name, int64_t value) {
  set(name, static_cast<double>(value));
  for (Entry& e : entries_)
    if (e.name == name) e.count = true;
}

std::optional<double> Metrics::find(const std::string& name) const {
  for (const Entry& e : entries_)
    if (e.name == name) return e.value;
  return std::nullopt;
}

double Metrics::at(const std::string& name) const {
  if (auto v = find(name)) return *v;
  throw std::out_of_range("no metric \"" + name + "\"");
}

std::vector<std::string> Metrics::names() const {
  std::vector<std::string> out;
  for (const Entry& e : entries_) out.push_back(e.name);
  return out;
}

bool Metrics::operator==(const Metrics& other) const {
  if (entries_.size() != other.entries_.size()) return false;
  for (const Entry& e : entries_) {
    const auto it = std::find_if(other.entries_.begin(), other.entries_.end(),
                                 [&](const Entry& o) { return o.name == e.name; });
    if (it == other.entries_.end() || !(*it == e)) return false;
  }
  return true;
}

void Metrics::write_to(nlohmann::json& object) const {
  for (const Entry& e : entries_) {
    if (e.count)
      object[e.name] = static_cast<int64_t>(e.value);
    else
      object[e.name] = e.value;  // nlohmann writes a non-finite double as null
  }
}

nlohmann::json Metrics::to_json() const {
  nlohmann::json out = nlohmann::json::object();
  write_to(out);
  return out;
}

Metrics Metrics::from_json(const nlohmann::json& object, const std::vector<std::string>& skip) {
  if (!object.is_object()) throw std::invalid_argument("metrics: expected a JSON object");
  Metrics m;
  for (const auto& item : object.items()) {
    if (std::find(skip.begin(), skip.end(), item.key()) != skip.end()) continue;
    const nlohmann::json& v = item.value();
    if (v.is_number_integer())
      m.set_count(item.key(), v.get<int64_t>());
    else if (v.is_number())
      m.set(item.key(), v.get<double>());
    else if (v.is_null())
      m.set(item.key(), std::nan(""));
    else
      throw std::invalid_argument("metric \"" + item.key() + "\" is not a number");
  }
  return m;
}

nlohmann::json EvalRecord::to_json() const {
  nlohmann::json out = {{kStep, step}, {kSplit, split}};
  metrics.write_to(out);
  return out;
}

EvalRecord EvalRecord::from_json(const nlohmann::json& object) {
  if (!object.is_object() || !object.contains(kStep) || !object[kStep].is_number_integer())
    throw std::invalid_argument("an evaluation record needs an integer \"step\"");
  if (!object.contains(kSplit) || !object[kSplit].is_string())
    throw std::invalid_argument("an evaluation record needs a string \"split\"");
  return {object[kStep].get<int64_t>(), object[kSplit].get<std::string>(),
          Metrics::from_json(object, {kStep, kSplit})};
}

nlohmann::json TrainRecord::to_json() const {
  nlohmann::json out = {{kStep, step},       {"epoch", epoch},       {"loss", loss},      {"lr", lr},
                        {"grad_norm", grad_norm}, {"tokens_per_s", tokens_per_s}, {"train_s", train_s}};
  if (!grad_scores.empty()) out["grad_scores"] = grad_scores;
  return out;
}

TrainRecord TrainRecord::from_json(const nlohmann::json& object) {
  if (!object.is_object() || !object.contains(kStep) || !object[kStep].is_number_integer())
    throw std::invalid_argument("a training record needs an integer \"step\"");
  auto number = [&](const char* key) {
    if (!object.contains(key) || !object[key].is_number())
      throw std::invalid_argument(std::string("a training record needs a number \"") + key + "\"");
    return object[key].get<double>();
  };
  TrainRecord r{object[kStep].get<int64_t>(), number("epoch"), number("loss"),        number("lr"),
                number("grad_norm"),         number("tokens_per_s"), number("train_s"), {}};
  if (object.contains("grad_scores")) {
    if (!object["grad_scores"].is_array()) throw std::invalid_argument("\"grad_scores\" is not a list");
    for (const nlohmann::json& g : object["grad_scores"])  // a non-finite value is written as null
      r.grad_scores.push_back(g.is_number() ? g.get<double>() : std::numeric_limits<double>::quiet_NaN());
  }
  return r;
}

std::pair<std::optional<TrainRecord>, std::optional<EvalRecord>> parse_metrics_line(const nlohmann::json& object) {
  if (object.is_object() && object.contains(kSplit)) return {std::nullopt, EvalRecord::from_json(object)};
  return {TrainRecord::from_json(object), std::nullopt};
}

}  // namespace tn
