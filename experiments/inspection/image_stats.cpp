#include "experiments/inspection/image_stats.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cmath>

namespace tn {

using nlohmann::ordered_json;

PixelMoments pixel_moments(const std::vector<ImageExample>& rows) {
  uint64_t n = 0, sum = 0, squares = 0;  // exact: 255² · 2^40 pixels would still fit
  for (const ImageExample& e : rows) {
    for (uint8_t p : e.pixels) {
      sum += p;
      squares += static_cast<uint64_t>(p) * p;
    }
    n += e.pixels.size();
  }
  if (n == 0) return {};
  const double mean = static_cast<double>(sum) / static_cast<double>(n);
  const double variance = static_cast<double>(squares) / static_cast<double>(n) - mean * mean;
  return {mean, std::sqrt(std::max(0.0, variance))};
}

namespace {
ordered_json split_stats(const ImageSplit& s, const std::vector<std::string>& names, int32_t majority) {
  std::vector<int64_t> per_class(names.size(), 0);
  for (const ImageExample& e : s.rows)
    if (e.label >= 0 && e.label < static_cast<int32_t>(names.size())) ++per_class[static_cast<size_t>(e.label)];
  ordered_json j;
  j["file"] = s.file;
  j["examples"] = s.rows.size();
  if (s.labelled) {
    ordered_json counts = ordered_json::object();
    for (size_t k = 0; k < names.size(); ++k) counts[names[k]] = per_class[k];
    j["labels"] = counts;
    if (majority >= 0 && !s.rows.empty())
      j["majority_accuracy"] = static_cast<double>(per_class[static_cast<size_t>(majority)]) /
                               static_cast<double>(s.rows.size());
  }
  const PixelMoments m = pixel_moments(s.rows);
  j["pixel_mean"] = m.mean;
  j["pixel_std"] = m.std;
  return j;
}
}  // namespace

ordered_json image_stats(const ImageSource& source, const std::vector<ImageSplit>& splits) {
  const std::vector<std::string> names = source.label_names();
  int32_t majority = -1;
  if (!splits.empty() && !names.empty()) {
    std::vector<int64_t> counts(names.size(), 0);
    for (const ImageExample& e : splits.front().rows)
      if (e.label >= 0 && e.label < static_cast<int32_t>(names.size())) ++counts[static_cast<size_t>(e.label)];
    majority = static_cast<int32_t>(std::max_element(counts.begin(), counts.end()) - counts.begin());
  }
  ordered_json out;
  out["dataset"] = source.dataset_name();
  out["image"] = {{"width", source.width()}, {"height", source.height()}};
  if (majority >= 0) out["majority_class"] = names[static_cast<size_t>(majority)];
  ordered_json by_split = ordered_json::object();
  for (const ImageSplit& s : splits) by_split[s.name] = split_stats(s, names, majority);
  out["splits"] = by_split;
  return out;
}

std::string image_stats_rows(const ordered_json& stats) {
  std::string out = fmt::format("{:<16} {:>9} {:>11} {:>10} {:>9}  {}\n", "split", "examples", "pixel mean",
                                "pixel std", "majority", "labels");
  for (const auto& [name, s] : stats["splits"].items()) {
    std::string labels;
    if (s.contains("labels"))
      for (const auto& [label, count] : s["labels"].items()) labels += fmt::format("{}:{} ", label, count.get<int64_t>());
    out += fmt::format("{:<16} {:>9} {:>11.2f} {:>10.2f} {:>9}  {}\n", name, s["examples"].get<int64_t>(),
                       s["pixel_mean"].get<double>(), s["pixel_std"].get<double>(),
                       s.contains("majority_accuracy") ? fmt::format("{:.4f}", s["majority_accuracy"].get<double>()) : "-",
                       labels);
  }
  return out;
}

}  // namespace tn
