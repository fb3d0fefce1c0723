// Every config the repository ships resolves: each experiment spec (with its base: chain), each
// sweep (all its points) and each model-only bench file, with no data read. A key renamed in the
// code, or a config edited into an invalid state, fails here rather than in a user's run.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "experiments/spec/spec.h"
#include "experiments/sweeps/sweep_spec.h"
#include "tests/test_paths.h"

using namespace tn;
namespace fs = std::filesystem;

namespace {
/// A sweep file has a top-level points:, grid: or seeds: key.
bool is_sweep(const fs::path& file) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("points:") || line.starts_with("grid:") || line.starts_with("seeds:")) return true;
  return false;
}
}  // namespace

TEST_CASE("configs: every shipped spec, sweep and bench model resolves") {
  // Bases that hold no data section, composed into the runnable specs beside them.
  const std::set<std::string> bases = {"paper/lra/encoder_t1.yaml"};
  const fs::path root = fs::path(test::source_dir()) / "configs";
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() > 40);
  int specs = 0, sweeps = 0, models = 0;
  for (const fs::path& file : files) {
    const std::string relative = fs::relative(file, root).string();
    CAPTURE(relative);
    if (bases.count(relative)) continue;
    try {
      if (relative.starts_with("bench/") && relative != "bench/sweep_speed.yaml") {
        load_model_only(file.string());
        ++models;
      } else if (is_sweep(file)) {
        CHECK(!load_sweep(file.string()).points.empty());
        ++sweeps;
      } else {
        const ExperimentSpec spec = load_spec(file.string());
        CHECK(spec.train.max_steps > 0);
        ++specs;
      }
    } catch (const ConfigError& e) {
      FAIL(e.what());
    }
  }
  CHECK(specs >= 25);
  CHECK(sweeps >= 7);
  CHECK(models >= 2);
}
