#include "experiments/tasks/classification_stats.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace tn {

using nlohmann::ordered_json;

namespace {

/// Percentiles 0, 50, 90, 99, 100 of `values` (nearest rank).
ordered_json percentiles(std::vector<int64_t> values) {
  ordered_json out = ordered_json::object();
  if (values.empty()) return out;
  std::sort(values.begin(), values.end());
  for (int p : {0, 50, 90, 99, 100}) {
    const auto rank = static_cast<size_t>(std::max(0.0, std::ceil(p / 100.0 * static_cast<double>(values.size())) - 1));
    out["p" + std::to_string(p)] = values[std::min(rank, values.size() - 1)];
  }
  return out;
}

ordered_json classification_split(const LabelledSequences& s, const std::vector<std::string>& labels,
                                  int32_t majority) {
  ordered_json j;
  j["file"] = s.file;
  j["examples"] = s.size();
  ordered_json counts = ordered_json::object();
  std::vector<int64_t> per_class(labels.size(), 0);
  for (int32_t l : s.labels)
    if (l >= 0 && l < static_cast<int32_t>(labels.size())) ++per_class[l];
  for (size_t k = 0; k < labels.size(); ++k) counts[labels[k]] = per_class[k];
  if (s.labelled && !labels.empty()) j["labels"] = counts;
  j["length_before_truncation"] = percentiles(s.source_lengths);
  std::vector<int64_t> after;
  for (const auto& v : s.inputs) after.push_back(static_cast<int64_t>(v.size()));
  for (const auto& v : s.seconds) after.push_back(static_cast<int64_t>(v.size()));
  j["length"] = percentiles(after);
  j["truncated"] = s.truncated;
  j["unknown_rate"] = s.symbols > 0 ? static_cast<double>(s.unknown) / static_cast<double>(s.symbols) : 0.0;
  if (s.labelled && majority >= 0 && s.size() > 0)
    j["majority_accuracy"] = static_cast<double>(per_class[majority]) / static_cast<double>(s.size());
  return j;
}

}  // namespace

ordered_json classification_statistics(const std::vector<LabelledSequences>& splits, const DatasetInfo& dataset,
                                       int64_t vocab_size) {
  const SentenceTarget& target = dataset.target;
  int32_t majority = -1;
  if (!target.regression) {
    std::vector<int64_t> counts(target.label_names.size(), 0);
    for (int32_t l : splits.front().labels)
      if (l >= 0) ++counts[l];
    majority = static_cast<int32_t>(std::max_element(counts.begin(), counts.end()) - counts.begin());
  }
  ordered_json out;
  out["dataset"] = dataset.name;
  out["vocab_size"] = vocab_size;
  if (majority >= 0) out["majority_class"] = target.label_names[majority];
  ordered_json by_split = ordered_json::object();
  for (const LabelledSequences& s : splits)
    by_split[s.name] = classification_split(s, target.regression ? std::vector<std::string>{} : target.label_names,
                                            majority);
  out["splits"] = by_split;
  return out;
}

}  // namespace tn
