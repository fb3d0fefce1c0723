#pragma once
// A scratch folder for tests that write files.
#include <unistd.h>

#include <filesystem>
#include <string>

namespace tn::test {

/// A fresh folder under the system temp dir ("tn_test_<tag>_<pid>"), removed at scope exit.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& tag)
      : path(std::filesystem::temp_directory_path() /
             ("tn_test_" + tag + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  /// The path of `name` inside the folder.
  std::string file(const std::string& name) const { return (path / name).string(); }
};

}  // namespace tn::test
