#include "experiments/outputs/run_summary.h"

#include <algorithm>
#include <stdexcept>
#include <type_traits>

namespace tn {

namespace {
// Top-level keys of summary.json that are not baselines or split metrics.
const std::vector<std::string> kKnown = {"train", "params", "vocab_size", "peak_rss_mb", "data", "evals", "analysis",
                                         "best", "stopped_early_at"};

const nlohmann::json& need(const nlohmann::json& object, const std::string& key) {
  if (!object.is_object() || !object.contains(key))
    throw std::invalid_argument("summary: missing \"" + key + "\"");
  return object[key];
}

template <class T>
T need_as(const nlohmann::json& object, const std::string& key) {
  const nlohmann::json& v = need(object, key);
  if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number()) throw std::invalid_argument("summary: \"" + key + "\" is not a number");
  } else {
    if (!v.is_number_integer()) throw std::invalid_argument("summary: \"" + key + "\" is not an integer");
  }
  return v.get<T>();
}

bool is_split(const std::string& key) { return key == "valid" || key == "test"; }
}  // namespace

nlohmann::json TrainTotals::to_json() const {
  return {{"steps", steps},   {"epochs", epochs},   {"tokens", tokens},   {"tokens_per_s", tokens_per_s},
          {"wall_s", wall_s}, {"eval_s", eval_s},   {"eval_tokens", eval_tokens},
          {"eval_tokens_per_s", eval_tokens_per_s},   {"total_s", total_s}, {"threads", threads},
          {"seed", seed},     {"ranks", ranks}};
}

TrainTotals TrainTotals::from_json(const nlohmann::json& o) {
  return {need_as<int64_t>(o, "steps"),
          need_as<double>(o, "epochs"),
          need_as<int64_t>(o, "tokens"),
          need_as<double>(o, "tokens_per_s"),
          need_as<double>(o, "wall_s"),
          need_as<double>(o, "eval_s"),
          o.contains("eval_tokens") ? need_as<int64_t>(o, "eval_tokens") : 0,
          o.contains("eval_tokens_per_s") ? need_as<double>(o, "eval_tokens_per_s") : 0.0,
          need_as<double>(o, "total_s"),
          need_as<int>(o, "threads"),
          need_as<uint64_t>(o, "seed"),
          o.contains("ranks") ? need_as<int>(o, "ranks") : 1};
}

nlohmann::json RunSummary::to_json() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [split, metrics] : final) out[split] = metrics.to_json();
  out["train"] = train.to_json();
  out["params"] = params;
  out["vocab_size"] = vocab_size;
  out["peak_rss_mb"] = peak_rss_mb;
  out["data"] = data;
  for (const auto& [key, value] : baselines) out[key] = value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  nlohmann::json records = nlohmann::json::array();
  for (const EvalRecord& r : evals) records.push_back(r.to_json());
  out["evals"] = records;
  if (!analysis.is_null()) out["analysis"] = analysis;
  if (!best.is_null()) out["best"] = best;
  if (!stopped_early_at.is_null()) out["stopped_early_at"] = stopped_early_at;
  return out;
}

RunSummary RunSummary::from_json(const nlohmann::json& o) {
  RunSummary s;
  s.train = TrainTotals::from_json(need(o, "train"));
  s.params = need_as<int64_t>(o, "params");
  s.vocab_size = need_as<int64_t>(o, "vocab_size");
  s.peak_rss_mb = need_as<double>(o, "peak_rss_mb");
  for (const auto& item : need(o, "data").items()) {
    if (!item.value().is_string()) throw std::invalid_argument("summary: data." + item.key() + " is not a string");
    s.data[item.key()] = item.value().get<std::string>();
  }
  const nlohmann::json& evals = need(o, "evals");
  if (!evals.is_array()) throw std::invalid_argument("summary: \"evals\" is not a list");
  for (const nlohmann::json& r : evals) s.evals.push_back(EvalRecord::from_json(r));
  if (o.contains("best")) s.best = o["best"];
  if (o.contains("stopped_early_at")) s.stopped_early_at = o["stopped_early_at"];
  if (o.contains("analysis")) {
    if (!o["analysis"].is_object()) throw std::invalid_argument("summary: \"analysis\" is not an object");
    s.analysis = o["analysis"];
  }
  for (const auto& item : o.items()) {
    const std::string& key = item.key();
    if (std::find(kKnown.begin(), kKnown.end(), key) != kKnown.end()) continue;
    if (is_split(key)) {
      s.final[key] = Metrics::from_json(item.value());
    } else if (item.value().is_null()) {
      s.baselines[key] = std::nullopt;
    } else if (item.value().is_number()) {
      s.baselines[key] = item.value().get<double>();
    } else {
      throw std::invalid_argument("summary: unexpected key \"" + key + "\"");
    }
  }
  return s;
}

}  // namespace tn
