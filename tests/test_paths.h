#pragma once
// Where tests find their inputs. Golden fixtures: tests/golden/ in the source tree, unless
// TRANSNORMER_GOLDEN names another folder of the same layout. Datasets: the source tree's datasets/
// folder (what scripts/setup.sh fills), unless TRANSNORMER_DATA names another data root.
#include <cstdlib>
#include <string>

namespace tn::test {

/// The data root the tests read datasets from (e.g. wikitext-103/wiki.test.tokens below it):
/// $TRANSNORMER_DATA when set and non-empty, else <source dir>/datasets.
inline std::string data_root() {
  if (const char* env = std::getenv("TRANSNORMER_DATA"); env && *env) return env;
  return std::string(TN_SOURCE_DIR) + "/datasets";
}

/// The golden fixture folder (tests/golden/README.md): $TRANSNORMER_GOLDEN when set and
/// non-empty, else <source dir>/tests/golden.
inline std::string golden_root() {
  if (const char* env = std::getenv("TRANSNORMER_GOLDEN"); env && *env) return env;
  return std::string(TN_SOURCE_DIR) + "/tests/golden";
}

/// The repository's source folder (absolute, as configured by CMake).
inline std::string source_dir() { return TN_SOURCE_DIR; }
/// The path of the built `transnormer` binary.
inline std::string binary() { return TN_BINARY; }

}  // namespace tn::test
