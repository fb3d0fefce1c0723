#pragma once
// The `pathfinder` reader: LRA Pathfinder, whether two markers lie on one path in a 32 x 32
// grayscale image (2 classes), read as a sequence of 1,024 pixel levels (Tay et al. 2021; the
// paper, §3.3; data/readers/pathfinder.h reads the files).
//   data: {reader: pathfinder, dir: lra/pathfinder32/curv_contour_length_14, image_size: 32,
//          split: [0.8, 0.1, 0.1], split_seed: 42, max_examples: null}
// The official TransNormer loader splits the images 80 / 10 / 10 into train, valid and test with
// random_split and a generator seeded 42; this reader does the same with its own seeded
// permutation (data/readers/image_split.h): the same sizes and a fixed choice per split_seed, but
// not torch's indices. max_examples keeps only the first N images in metadata order (small
// configs), before the split.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/platform/config/json_section.h"
#include "data/readers/reader.h"

namespace tn {

class PathfinderSpec final : public DataSpec, public ImageSource {
 public:
  std::string dir = "lra/pathfinder32/curv_contour_length_14";  // holds metadata/ and imgs/; from the data root
  int64_t image_size = 32;                                       // width and height of every image
  std::vector<double> split = {0.8, 0.1, 0.1};                   // train, valid, test shares; sum 1
  uint64_t split_seed = 42;
  int64_t max_examples = 0;                                      // 0 (null): every image

  std::string reader() const override { return "pathfinder"; }
  nlohmann::ordered_json to_json() const override;
  bool equals(const DataSpec& other) const override;
  int64_t tokens_per_sample() const override { return image_size * image_size; }
  std::string length_key() const override { return "image_size"; }
  /// "Pathfinder-32" (the image size).
  std::string dataset_name() const override { return "Pathfinder-" + std::to_string(image_size); }
  int64_t width() const override { return image_size; }
  int64_t height() const override { return image_size; }
  /// "0" (the markers are not connected), "1" (they are).
  std::vector<std::string> label_names() const override { return {"0", "1"}; }
  /// train, valid, test, sized by `split` as random_split does (a split of share 0 is left out),
  /// each in the permutation's order. Throws as read_pathfinder.
  std::vector<ImageSplit> read_images(const std::string& data_root) const override;
};

/// Resolves a `data:` section with reader pathfinder. Throws ConfigIssue at the key with the fix.
std::shared_ptr<const DataSpec> resolve_pathfinder_spec(const JsonSection& section);

}  // namespace tn
