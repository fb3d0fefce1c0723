#pragma once
// `transnormer data stats SPEC`: what a spec's data looks like once the reader and the task's
// encoding have read it, before any training: examples per split, label counts, lengths (in the
// model's tokens) before and after truncation as percentiles, the vocabulary size, the share of
// symbols outside the vocabulary (<unk>), and the majority-class baseline of each evaluation split
// (the training split's commonest class predicted for every example). For a language-model reader:
// lines, tokens, vocabulary size and <unk> share per split. For an image reader
// (experiments/inspection/image_stats.h): examples, label counts, the majority baseline, the image size and
// the pixel levels' mean and std per split; and, when asked, the first images of each split as PNG
// files (experiments/inspection/image_dump.h).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "experiments/spec/spec.h"

namespace tn {

/// What `data stats` writes besides the numbers: the first `images` examples of each split as PNG
/// files in `images_dir`, enlarged `images_scale` times (image readers only).
struct DataStatsOptions {
  int64_t images = 0;
  std::string images_dir;
  int64_t images_scale = 8;
};

/// The statistics as JSON: {"reader", "task", "vocab_size", "splits": {name: {...}}}; for an image
/// reader {"reader", "task", "dataset", "image", "majority_class", "splits"}, and "images": {"dir",
/// "scale", "files"} when images were written. Reads the data as the task does (the same errors:
/// DataError naming file and line or record, ConfigError). Throws ConfigError when images are asked
/// of a reader that has none, or without images_dir.
nlohmann::ordered_json data_stats(const ExperimentSpec& spec, const std::string& data_root,
                                  const DataStatsOptions& options = {});

/// The same as a table for people, one row per split.
std::string data_stats_table(const nlohmann::ordered_json& stats);

}  // namespace tn
