#include "data/readers/pathfinder_spec.h"

#include <cmath>

#include "core/platform/io/png_image.h"
#include "data/data_root.h"
#include "data/readers/image_split.h"
#include "data/readers/pathfinder.h"

namespace tn {

namespace {
const char* const kSplitFix = "give three shares of train, valid and test that sum to 1 (official: [0.8, 0.1, 0.1])";

std::vector<double> resolve_split(const JsonSection& s, const std::vector<double>& fallback) {
  const nlohmann::json* v = s.find("split");
  if (!v) return fallback;
  if (!v->is_array() || v->size() != 3) s.fail("split", "must be a list of three numbers, got " + describe_json(*v), kSplitFix);
  std::vector<double> out;
  double sum = 0;
  for (const nlohmann::json& x : *v) {
    if (!x.is_number() || !std::isfinite(x.get<double>()) || x.get<double>() < 0)
      s.fail("split", "holds " + describe_json(x) + ", not a share >= 0", kSplitFix);
    out.push_back(x.get<double>());
    sum += out.back();
  }
  if (std::abs(sum - 1.0) > 1e-6) s.fail("split", "sums to " + std::to_string(sum) + ", not 1", kSplitFix);
  if (out[0] <= 0) s.fail("split", "gives the training split no share", kSplitFix);
  return out;
}
}  // namespace

nlohmann::ordered_json PathfinderSpec::to_json() const {
  return {{"reader", reader()},
          {"dir", dir},
          {"image_size", image_size},
          {"split", split},
          {"split_seed", split_seed},
          {"max_examples", max_examples > 0 ? nlohmann::ordered_json(max_examples) : nlohmann::ordered_json(nullptr)}};
}

bool PathfinderSpec::equals(const DataSpec& other) const {
  const auto* o = dynamic_cast<const PathfinderSpec*>(&other);
  return o && o->dir == dir && o->image_size == image_size && o->split == split && o->split_seed == split_seed &&
         o->max_examples == max_examples;
}

std::vector<ImageSplit> PathfinderSpec::read_images(const std::string& data_root) const {
  const std::string root = data_path(data_root, dir);
  std::vector<ImageExample> rows = read_pathfinder(root, image_size, max_examples);
  const auto n = static_cast<int64_t>(rows.size());
  const std::vector<int64_t> sizes = split_sizes(n, split);
  const auto parts = permuted_parts(n, sizes, split_seed);
  const char* names[] = {"train", "valid", "test"};
  const SentenceSplit::Role roles[] = {SentenceSplit::Role::Train, SentenceSplit::Role::Valid, SentenceSplit::Role::Test};
  std::vector<ImageSplit> out;
  for (size_t k = 0; k < 3; ++k) {
    if (k > 0 && split[k] == 0) continue;
    const std::string file = root + " (" + std::to_string(sizes[k]) + " of " + std::to_string(n) +
                             " images, split_seed " + std::to_string(split_seed) + ")";
    out.push_back(take_image_split(names[k], roles[k], file, rows, parts[k]));
  }
  return out;
}

std::shared_ptr<const DataSpec> resolve_pathfinder_spec(const JsonSection& s) {
  s.check_keys({"reader", "dir", "image_size", "split", "split_seed", "max_examples"}, true);
  auto d = std::make_shared<PathfinderSpec>();
  d->dir = s.string("dir", d->dir);
  if (d->dir.empty()) s.fail("dir", "is empty", "name the folder holding metadata/ and imgs/");
  d->image_size = s.at_least("image_size", s.integer("image_size", d->image_size), 1,
                             "give the images' width and height in pixels (Pathfinder-32: 32)");
  if (d->image_size > kMaxPngSide)
    s.fail("image_size", "is " + std::to_string(d->image_size) + ", more than the " + std::to_string(kMaxPngSide) +
                             " pixels an image may have",
           "give the images' width and height in pixels (Pathfinder-32: 32, Path-X: 128)");
  d->split = resolve_split(s, d->split);
  d->split_seed = s.unsigned_integer("split_seed", d->split_seed);
  const nlohmann::json* max = s.find("max_examples");
  if (max && !max->is_null())
    d->max_examples = s.at_least("max_examples", s.integer("max_examples", 0), 1,
                                 "give how many images to read from the start, or null for all");
  return d;
}

}  // namespace tn
