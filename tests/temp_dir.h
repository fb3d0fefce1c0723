#pragma once
// A scratch folder for tests that write files.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace tn::test {

/// A fresh folder under the system temp dir ("tn_test_<tag>_XXXXXX", unique even within one
/// process), removed with everything in it at scope exit.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& tag) {
    std::string pattern = (std::filesystem::temp_directory_path() / ("tn_test_" + tag + "_XXXXXX")).string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot create a scratch folder " + pattern);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  /// The path of `name` inside the folder.
  std::string file(const std::string& name) const { return (path / name).string(); }
  /// Writes `text` to the file `name` inside the folder and returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return file(name);
  }
};

}  // namespace tn::test
