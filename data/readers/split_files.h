#pragma once
// The three split files of a dataset kept in one folder, as the LRA readers (listops, aan) name
// them in their data section:
//   data: {dir: lra/listops-1000, train: basic_train.tsv, valid: basic_val.tsv, test: basic_test.tsv}
// A file key takes null for "not read"; paths are relative to `dir`, and `dir` to the data root,
// unless absolute.
#include <nlohmann/json.hpp>
#include <string>

#include "core/platform/config/json_section.h"

namespace tn {

struct SplitFiles {
  std::string dir, train, valid, test;  // "" = not read (dir: the data root itself)

  /// {dir, train, valid, test}, null for a file not read.
  nlohmann::ordered_json to_json() const;
  bool operator==(const SplitFiles&) const = default;
  /// `file` inside `dir`, resolved against data_root (either may be absolute).
  std::string path(const std::string& data_root, const std::string& file) const;
};

/// A file key as a resolved data section writes it: the path, or null for a split not read ("").
nlohmann::ordered_json nullable_file(const std::string& path);

/// A file key of `s`: absent → `fallback`; null → "" (not read); else a non-empty string. Throws
/// ConfigIssue at the key, with `fix`, for an empty string.
std::string optional_file_key(const JsonSection& s, const std::string& key,
                              const std::string& fallback, const std::string& fix);

/// Reads dir, train, valid and test of `s` over `defaults` (the caller checks the section's other
/// keys). train is required to be non-null. Throws ConfigIssue at the key with the fix.
SplitFiles resolve_split_files(const JsonSection& s, const SplitFiles& defaults);

}  // namespace tn
