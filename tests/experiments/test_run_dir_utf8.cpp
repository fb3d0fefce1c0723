// Names from a dataset that are not UTF-8 (a Pathfinder file name, a CIFAR-10 class name) reach
// the run's JSON records: they are written with U+FFFD for the stray bytes, never a json
// type_error that ends the run at its first evaluation.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "core/platform/io/json_errors.h"
#include "experiments/runner/run_dir.h"
#include "tests/temp_dir.h"

using namespace tn;

namespace {
std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}
}  // namespace

TEST_CASE("run records: a name that is not UTF-8 is written with U+FFFD, not thrown") {
  const std::string bad = "sample_\xff\xfe.png";  // Latin-1 bytes in a file name
  CHECK(dump_json_text(nlohmann::json{{"id", bad}}) == "{\"id\":\"sample_\xEF\xBF\xBD\xEF\xBF\xBD.png\"}");
  CHECK(dump_json_text(nlohmann::ordered_json{{"class", "caf\xe9"}}) == "{\"class\":\"caf\xEF\xBF\xBD\"}");

  test::TempDir dir("run_utf8");
  RunDir run(dir.file("run"));
  run.write_predictions("valid", {nlohmann::json{{"id", bad}, {"label", 1}, {"prediction", 0}}});
  const std::string text = read_all(dir.file("run/predictions/valid.jsonl"));
  CHECK(text.find("sample_\xEF\xBF\xBD\xEF\xBF\xBD.png") != std::string::npos);
  CHECK(nlohmann::json::parse(text).at("label") == 1);
}
