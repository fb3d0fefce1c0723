#pragma once
// The `cifar10` reader: LRA Image, ten-way classification of CIFAR-10 images in grayscale, read as
// a sequence of 1,024 pixel levels (Tay et al. 2021; the paper, §3.3; data/readers/cifar10.h reads
// the files).
//   data: {reader: cifar10, path: lra/cifar10, valid_size: 5000, split_seed: 42, test: true}
// The official TransNormer loader splits the 50,000 training images into 45,000 train and 5,000
// valid with random_split and a generator seeded 42; this reader does the same with its own seeded
// permutation (data/readers/image_split.h): the same sizes and a fixed choice per split_seed, but
// not torch's indices. The test split is test_batch.bin, as there.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/platform/config/json_section.h"
#include "data/readers/reader.h"

namespace tn {

class Cifar10Spec final : public DataSpec, public ImageSource {
 public:
  std::string path = "lra/cifar10";  // archive, folder holding it, or cifar-10-batches-bin/; from the data root
  int64_t valid_size = 5000;         // training images held out for validation; 0: no valid split
  uint64_t split_seed = 42;          // the permutation that picks them
  bool test = true;                  // read test_batch.bin as the test split

  std::string reader() const override { return "cifar10"; }
  nlohmann::ordered_json to_json() const override;
  bool equals(const DataSpec& other) const override;
  int64_t tokens_per_sample() const override { return 32 * 32; }
  std::string length_key() const override { return ""; }
  std::string dataset_name() const override { return "CIFAR-10"; }
  int64_t width() const override { return 32; }
  int64_t height() const override { return 32; }
  /// The names of batches.meta.txt once read_images has read one, else the standard ten
  /// (airplane ... truck).
  std::vector<std::string> label_names() const override;
  /// train (the training images less the held-out ones), valid (valid_size of them, when > 0), test
  /// (when `test`), each in the permutation's order. Throws as read_cifar10, and ConfigError when
  /// valid_size leaves no training image.
  std::vector<ImageSplit> read_images(const std::string& data_root) const override;

 private:
  mutable std::mutex names_mutex_;
  mutable std::vector<std::string> names_read_;  // batches.meta.txt's, after read_images
};

/// Resolves a `data:` section with reader cifar10. Throws ConfigIssue at the key with the fix.
std::shared_ptr<const DataSpec> resolve_cifar10_spec(const JsonSection& section);

}  // namespace tn
