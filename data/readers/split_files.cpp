#include "data/readers/split_files.h"

#include "data/data_root.h"

namespace tn {

nlohmann::ordered_json nullable_file(const std::string& path) {
  return path.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(path);
}

std::string optional_file_key(const JsonSection& s, const std::string& key,
                              const std::string& fallback, const std::string& fix) {
  const nlohmann::json* v = s.find(key);
  if (!v) return fallback;
  if (v->is_null()) return "";
  const std::string value = s.string(key, fallback);
  if (value.empty()) s.fail(key, "is empty", fix);
  return value;
}

namespace {
std::string file_key(const JsonSection& s, const std::string& key, const std::string& fallback) {
  return optional_file_key(s, key, fallback, "give a file name, or null to leave the split out");
}
}  // namespace

nlohmann::ordered_json SplitFiles::to_json() const {
  return {{"dir", dir}, {"train", nullable_file(train)}, {"valid", nullable_file(valid)}, {"test", nullable_file(test)}};
}

std::string SplitFiles::path(const std::string& data_root, const std::string& file) const {
  return data_path(data_path(data_root, dir), file);
}

SplitFiles resolve_split_files(const JsonSection& s, const SplitFiles& defaults) {
  SplitFiles f;
  f.dir = s.string("dir", defaults.dir);
  f.train = file_key(s, "train", defaults.train);
  f.valid = file_key(s, "valid", defaults.valid);
  f.test = file_key(s, "test", defaults.test);
  if (f.train.empty()) s.fail("train", "is null", "give the training split's file: the vocabulary is built from it");
  return f;
}

}  // namespace tn
