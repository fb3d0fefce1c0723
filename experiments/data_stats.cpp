#include "experiments/data_stats.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>

#include "core/error.h"
#include "experiments/image_dump.h"
#include "experiments/image_stats.h"
#include "experiments/tasks/lm_data.h"
#include "experiments/tasks/registry.h"
#include "experiments/tasks/sequence_classification.h"

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

ordered_json classification_stats(const SequenceClassificationTask& task, const ExperimentSpec& spec) {
  const auto* source = dynamic_cast<const SentenceSource*>(spec.data.get());
  const SentenceTarget target = source->target();
  const std::vector<LabelledSequences>& splits = task.splits();
  int32_t majority = -1;
  if (!target.regression) {
    std::vector<int64_t> counts(target.label_names.size(), 0);
    for (int32_t l : splits.front().labels)
      if (l >= 0) ++counts[l];
    majority = static_cast<int32_t>(std::max_element(counts.begin(), counts.end()) - counts.begin());
  }
  ordered_json out;
  out["dataset"] = source->dataset_name();
  out["vocab_size"] = task.vocabulary().size();
  if (majority >= 0) out["majority_class"] = target.label_names[majority];
  ordered_json by_split = ordered_json::object();
  for (const LabelledSequences& s : splits)
    by_split[s.name] = classification_split(s, target.regression ? std::vector<std::string>{} : target.label_names,
                                            majority);
  out["splits"] = by_split;
  return out;
}

ordered_json text_stats(const TextSource& source, const std::string& data_root) {
  const TextSplits text = source.read_text(data_root);
  const LmData data = encode_lm_data(text);
  ordered_json out;
  out["vocab_size"] = data.vocab.size();
  ordered_json by_split = ordered_json::object();
  const auto add = [&](const std::string& name, const std::vector<std::string>& lines, const std::string& file,
                       const std::vector<int32_t>& ids) {
    if (file.empty()) return;
    const auto unk = std::count(ids.begin(), ids.end(), data.vocab.id("<unk>"));
    by_split[name] = {{"file", file},
                      {"lines", lines.size()},
                      {"tokens", ids.size()},
                      {"unknown_rate", ids.empty() ? 0.0 : static_cast<double>(unk) / static_cast<double>(ids.size())}};
  };
  add("train", text.train, text.train_file, data.train);
  add("valid", text.valid, text.valid_file, data.valid);
  add("test", text.test, text.test_file, data.test);
  out["splits"] = by_split;
  return out;
}

/// An image reader's statistics, read straight from the reader (the pixel levels are what the model
/// is given), and the PNG dump when asked; the options are checked before the data is read.
ordered_json image_data_stats(const ImageSource& source, const std::string& data_root, const DataStatsOptions& o) {
  if (o.images > 0 && o.images_dir.empty())
    throw ConfigError("--images " + std::to_string(o.images) + ": name the folder to write them to (--images-dir DIR)");
  if (o.images_scale < 1 || o.images_scale > 64)
    throw ConfigError("--images-scale " + std::to_string(o.images_scale) +
                      ": must lie in 1..64 (8 shows 32 x 32 at 256 x 256)");
  const std::vector<ImageSplit> splits = source.read_images(data_root);
  ordered_json out = image_stats(source, splits);
  if (o.images > 0) {
    const std::vector<std::string> files = dump_images(splits, source.width(), source.height(), source.label_names(),
                                                       o.images, o.images_dir, o.images_scale);
    out["images"] = {{"dir", o.images_dir}, {"scale", o.images_scale}, {"files", files.size()}};
  }
  return out;
}

}  // namespace

ordered_json data_stats(const ExperimentSpec& spec, const std::string& data_root, const DataStatsOptions& options) {
  ordered_json out;
  out["reader"] = spec.data->reader();
  out["task"] = spec.task;
  const auto* images = dynamic_cast<const ImageSource*>(spec.data.get());
  if (images) {
    out.update(image_data_stats(*images, data_root, options));
    return out;
  }
  if (options.images > 0)
    throw ConfigError("--images: the " + spec.data->reader() +
                      " reader yields no images; only image readers (cifar10, pathfinder) have images to write");
  if (const auto* text = dynamic_cast<const TextSource*>(spec.data.get()); text && spec.task == "language_modeling") {
    out.update(text_stats(*text, data_root));
    return out;
  }
  const std::unique_ptr<Task> task = make_task(spec, data_root);
  if (const auto* c = dynamic_cast<const SequenceClassificationTask*>(task.get())) {
    out.update(classification_stats(*c, spec));
    return out;
  }
  out["note"] = "this task reports no data statistics beyond its summary";
  out["data"] = task->report().data;
  return out;
}

std::string data_stats_table(const ordered_json& stats) {
  std::string out = fmt::format("reader {}, task {}", stats.value("reader", ""), stats.value("task", ""));
  if (stats.contains("vocab_size")) out += fmt::format(", vocabulary {}", stats["vocab_size"].get<int64_t>());
  if (stats.contains("image"))
    out += fmt::format(", {} images {}x{}", stats.value("dataset", ""), stats["image"]["width"].get<int64_t>(),
                       stats["image"]["height"].get<int64_t>());
  if (stats.contains("majority_class")) out += ", majority class " + stats["majority_class"].get<std::string>();
  out += "\n";
  if (stats.contains("note")) out += stats["note"].get<std::string>() + "\n";
  if (!stats.contains("splits")) return out;
  if (stats.contains("image")) {
    out += image_stats_rows(stats);
    if (stats.contains("images"))
      out += fmt::format("wrote {} images (x{}) to {}\n", stats["images"]["files"].get<int64_t>(),
                         stats["images"]["scale"].get<int64_t>(), stats["images"]["dir"].get<std::string>());
    return out;
  }
  out += fmt::format("{:<16} {:>9} {:>28} {:>28} {:>9} {:>9}  {}\n", "split", "examples", "length p50/p90/p100 (cut)",
                     "before cut p50/p90/p100", "unk %", "majority", "labels");
  for (const auto& item : stats["splits"].items()) {
    const std::string& name = item.key();  // named copies, not structured bindings: clang 14
    const nlohmann::json& s = item.value();  // lambdas cannot capture those
    const auto pct = [&](const char* key) {
      if (!s.contains(key) || s[key].empty()) return std::string("-");
      return fmt::format("{}/{}/{}", s[key]["p50"].get<int64_t>(), s[key]["p90"].get<int64_t>(),
                         s[key]["p100"].get<int64_t>());
    };
    const int64_t n = s.contains("examples") ? s["examples"].get<int64_t>() : s.value("lines", int64_t{0});
    std::string labels = s.contains("tokens") ? fmt::format("{} tokens", s["tokens"].get<int64_t>()) : "";
    if (s.contains("labels"))
      for (const auto& [label, count] : s["labels"].items()) labels += fmt::format("{}:{} ", label, count.get<int64_t>());
    out += fmt::format("{:<16} {:>9} {:>28} {:>28} {:>9.4f} {:>9}  {}\n", name, n,
                       pct("length") + (s.contains("truncated") ? fmt::format(" ({})", s["truncated"].get<int64_t>()) : ""),
                       pct("length_before_truncation"), 100.0 * s.value("unknown_rate", 0.0),
                       s.contains("majority_accuracy") ? fmt::format("{:.4f}", s["majority_accuracy"].get<double>()) : "-",
                       labels);
  }
  return out;
}

}  // namespace tn
