#include "data/data_root.h"

#include <cstdlib>
#include <filesystem>

namespace tn {

std::string resolve_data_root(const std::string& flag_value) {
  if (!flag_value.empty()) return flag_value;
  if (const char* env = std::getenv("TRANSNORMER_DATA"); env && *env) return env;
  return "datasets";
}

std::string data_path(const std::string& root, const std::string& relative) {
  std::filesystem::path p(relative);
  if (p.is_absolute()) return relative;
  return (std::filesystem::path(root) / p).string();
}

std::string find_data_file(const std::string& root, const std::string& path) {
  if (path.empty() || std::filesystem::path(path).is_absolute() || std::filesystem::exists(path)) return path;
  return data_path(root, path);
}

}  // namespace tn
