#pragma once
// `data stats` for an image reader (cifar10, pathfinder): per split the examples, the label counts,
// the majority-class baseline (the training split's commonest class predicted for every example)
// and the mean and standard deviation of the pixel levels (0..255, over every pixel of every image
// of the split). The model sees these levels; the official loaders normalise CIFAR-10 with mean
// 122.6 and std 61.0 and Pathfinder with 127.5 and 127.5, which these numbers can be held against.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "data/readers/reader.h"

namespace tn {

/// Mean and population standard deviation of every pixel level of `rows` (0, 0 when empty).
struct PixelMoments {
  double mean = 0, std = 0;
};
PixelMoments pixel_moments(const std::vector<ImageExample>& rows);

/// The statistics of `splits` (as `source` read them) as JSON: {"dataset", "image": {"width",
/// "height"}, "majority_class", "splits": {name: {"file", "examples", "labels": {name: count},
/// "majority_accuracy", "pixel_mean", "pixel_std"}}}.
nlohmann::ordered_json image_stats(const ImageSource& source, const std::vector<ImageSplit>& splits);

/// The rows of the table for people, one per split, under their own header (data_stats_table).
std::string image_stats_rows(const nlohmann::ordered_json& stats);

}  // namespace tn
