// `transnormer forward` on a golden fixture: the same numbers as the fixture, through the binary.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/app/cli_runner.h"

using namespace tn::test;
using nlohmann::json;

TEST_CASE("cli: forward --grads reproduces a golden fixture's loss and gradient norms") {
  const std::string dir = scratch_dir("forward");
  const std::string golden = golden_root() + "/enc_t1_cls";
  CliResult r = run_cli("forward --checkpoint '" + golden + "/model.safetensors' --input '" + golden +
                            "/input.json' --grads --output " + dir + "/out.json",
                        dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const json out = json::parse(slurp(dir + "/out.json"));
  const json expected = json::parse(slurp(golden + "/expected.json"));
  CHECK(out["loss"].get<double>() == doctest::Approx(expected["loss"].get<double>()).epsilon(1e-4));
  CHECK(out["logits"].size() == expected["logits"].size());
  CHECK(out["grad_global_norm"].get<double>() ==
        doctest::Approx(expected["grad_global_norm"].get<double>()).epsilon(1e-3));
  // Without --output the JSON goes to stdout, logs to stderr.
  CliResult s = run_cli("forward --checkpoint '" + golden + "/model.safetensors' --input '" + golden + "/input.json'", dir);
  REQUIRE(s.code == 0);
  CHECK(json::parse(s.out)["loss"].get<double>() == doctest::Approx(expected["loss"].get<double>()).epsilon(1e-4));
  CHECK_FALSE(json::parse(s.out).contains("grad_norms"));
}
