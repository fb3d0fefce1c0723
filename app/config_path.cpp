#include "app/config_path.h"

#include <filesystem>

namespace tn::app {

std::string find_config(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path.empty() || fs::exists(path, ec) || fs::path(path).is_absolute()) return path;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return path;
  const fs::path installed = exe.parent_path().parent_path() / "share" / "transnormer" / "configs" / path;
  return fs::is_regular_file(installed, ec) ? installed.string() : path;
}

}  // namespace tn::app
