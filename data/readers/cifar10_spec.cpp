#include "data/readers/cifar10_spec.h"

#include "core/error.h"
#include "data/data_root.h"
#include "data/readers/cifar10.h"
#include "data/readers/image_split.h"

namespace tn {

nlohmann::ordered_json Cifar10Spec::to_json() const {
  return {{"reader", reader()}, {"path", path}, {"valid_size", valid_size}, {"split_seed", split_seed}, {"test", test}};
}

bool Cifar10Spec::equals(const DataSpec& other) const {
  const auto* o = dynamic_cast<const Cifar10Spec*>(&other);
  return o && o->path == path && o->valid_size == valid_size && o->split_seed == split_seed && o->test == test;
}

std::vector<std::string> Cifar10Spec::label_names() const {
  std::lock_guard<std::mutex> lock(names_mutex_);
  return names_read_.empty() ? cifar10_class_names() : names_read_;
}

std::vector<ImageSplit> Cifar10Spec::read_images(const std::string& data_root) const {
  const std::string where = data_path(data_root, path);
  Cifar10Data data = read_cifar10(where, test);
  {
    std::lock_guard<std::mutex> lock(names_mutex_);
    names_read_ = data.class_names;
  }
  const auto n = static_cast<int64_t>(data.train.size());
  if (valid_size >= n)
    throw ConfigError("data.valid_size: " + std::to_string(valid_size) + " leaves no training image (" + data.source +
                      " holds " + std::to_string(n) + "); lower it (the official split holds out 5000 of 50000)");
  const auto parts = permuted_parts(n, {n - valid_size, valid_size}, split_seed);
  const std::string batches = data.source + " (data_batch_1..5.bin";
  const std::string seed = " by split_seed " + std::to_string(split_seed) + ")";
  std::vector<ImageSplit> out;
  out.push_back(take_image_split("train", SentenceSplit::Role::Train,
                                 batches + ", " + std::to_string(n - valid_size) + " of " + std::to_string(n) + seed,
                                 data.train, parts[0]));
  if (valid_size > 0)
    out.push_back(take_image_split("valid", SentenceSplit::Role::Valid,
                                   batches + ", " + std::to_string(valid_size) + " held out" + seed, data.train,
                                   parts[1]));
  if (test) {
    std::vector<int64_t> all(data.test.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
    out.push_back(take_image_split("test", SentenceSplit::Role::Test, data.source + " (test_batch.bin)", data.test, all));
  }
  return out;
}

std::shared_ptr<const DataSpec> resolve_cifar10_spec(const JsonSection& s) {
  s.check_keys({"reader", "path", "valid_size", "split_seed", "test"}, true);
  auto d = std::make_shared<Cifar10Spec>();
  d->path = s.string("path", d->path);
  if (d->path.empty())
    s.fail("path", "is empty", "name cifar-10-binary.tar.gz, the folder holding it, or cifar-10-batches-bin/");
  d->valid_size = s.at_least("valid_size", s.integer("valid_size", d->valid_size), 0,
                             "give the training images to hold out for validation (official: 5000), or 0 for none");
  d->split_seed = s.unsigned_integer("split_seed", d->split_seed);
  d->test = s.boolean("test", d->test);
  return d;
}

}  // namespace tn
