#include "experiments/inspection/data_stats.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>

#include "core/error.h"
#include "experiments/inspection/image_dump.h"
#include "experiments/inspection/image_stats.h"
#include "experiments/tasks/registry.h"

namespace tn {

using nlohmann::ordered_json;

namespace {

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
  const std::unique_ptr<Task> task = make_task(spec, data_root);
  if (ordered_json stats = task->data_statistics(); !stats.empty()) {
    out.update(stats);
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
