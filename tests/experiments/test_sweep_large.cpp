// A long --grid (thousands of values): every point records where its value came from without a
// copy of the whole option (that made n values cost n² bytes: 6.4 GB for 20,000 seeds), and a
// repeated value is found by lookup, naming both positions.
#include <doctest/doctest.h>

#include <string>

#include "core/error.h"
#include "experiments/sweeps/sweep_spec.h"
#include "tests/test_paths.h"

using namespace tn;

namespace {
std::string seeds(int n) {
  std::string text = "train.seed=";
  for (int i = 0; i < n; ++i) text += (i ? "," : "") + std::to_string(i);
  return text;
}
}  // namespace

TEST_CASE("sweep: a grid of 5000 seeds expands with short origins") {
  const std::string quickstart = test::source_dir() + "/configs/quickstart.yaml";
  const SweepSpec sweep = load_sweep(quickstart, SweepCommandLine{{}, {seeds(5000)}});
  REQUIRE(sweep.points.size() == 5000);
  CHECK(sweep.points[4321].spec.train.seed == 4321);
  size_t longest = 0;
  for (const SweepPoint& p : sweep.points)
    for (const SpecOverride& o : p.overrides) longest = std::max(longest, o.origin.size());
  CHECK(longest < 400);  // the option was 23,890 bytes

  try {
    load_sweep(quickstart, SweepCommandLine{{}, {seeds(5000) + ",17"}});
    FAIL("a repeated value was accepted");
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    INFO(message);
    CHECK(message.find("repeats the value 17") != std::string::npos);
    CHECK(message.find("[17]") != std::string::npos);
    CHECK(message.size() < 600);
  }
}
