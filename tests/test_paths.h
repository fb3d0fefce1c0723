#pragma once
// Where tests find ../shared: TRANSNORMER_DATA (datasets) and TRANSNORMER_GOLDEN (fixtures), else
// the shared/ folder beside the source tree, as CI lays it out.
#include <cstdlib>
#include <string>

namespace tn::test {

inline std::string data_root() {
  if (const char* env = std::getenv("TRANSNORMER_DATA"); env && *env) return env;
  return std::string(TN_SOURCE_DIR) + "/../shared/data";
}

inline std::string golden_root() {
  if (const char* env = std::getenv("TRANSNORMER_GOLDEN"); env && *env) return env;
  return std::string(TN_SOURCE_DIR) + "/../shared/golden";
}

/// The PyTorch reference's folder (its quickstart.yaml): beside the golden fixtures.
inline std::string reference_root() { return golden_root() + "/../reference"; }

inline std::string source_dir() { return TN_SOURCE_DIR; }
inline std::string binary() { return TN_BINARY; }

}  // namespace tn::test
