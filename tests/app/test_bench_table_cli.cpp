// `bench --table` (the paper's Table 7 comparison) end to end on tiny shapes: every (model, n)
// point measured in its own process, the reference's side run through the given command and its
// JSON read, and the table, JSON and plots written. Checks structure, not speed.
#include <doctest/doctest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "tests/app/cli_runner.h"

using namespace tn::test;
using nlohmann::json;

TEST_CASE("cli: bench --table measures every model and n, runs the reference command, writes table and plots") {
  const std::string dir = scratch_dir("bench_table");
  // A stand-in for the reference: prints train-bench's JSON line, the tokens/s taken from --seq-len.
  write_text(dir + "/fake_ref.sh",
             "while [ $# -gt 0 ]; do [ \"$1\" = --seq-len ] && n=$2; shift; done\n"
             "echo '{\"tokens_per_s\": '$n', \"step_s\": 1.0}'\n");
  const std::string configs =
      source_dir() + "/configs/bench/table7/t1.yaml " + source_dir() + "/configs/bench/table7/softmax.yaml";
  CliResult r = run_cli("bench " + configs + " --table --seq-lens 64,128 --batch 1 --threads 1 --steps 1 --warmup 0"
                        " --reference 'sh " + dir + "/fake_ref.sh' --out " + dir + "/t7", dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const json t = json::parse(slurp(dir + "/t7/bench_table.json"));
  REQUIRE(t["rows"].size() == 4);
  CHECK(t["rows"][0]["model"] == "t1");
  CHECK(t["rows"][3]["model"] == "softmax");
  CHECK(t["rows"][3]["seq_len"] == 128);
  for (const json& row : t["rows"]) {
    CHECK(row["train_tokens_per_s"].get<double>() > 0);
    CHECK(row["peak_mb"].get<double>() > 0);
    CHECK(row["ref_train_tokens_per_s"].get<double>() == row["seq_len"].get<double>());
    CHECK(row["error"] == "");
  }
  CHECK(r.out.find("| t1 | 64 |") != std::string::npos);
  CHECK(std::filesystem::exists(dir + "/t7/plots/bench_train_tokens_per_s.svg"));
  CHECK(std::filesystem::exists(dir + "/t7/plots/bench_peak_memory.svg"));

  // A failing reference is recorded per point, not fatal; a missing model file is refused (exit 2).
  CliResult bad_ref = run_cli("bench " + source_dir() + "/configs/bench/table7/t1.yaml --table --seq-lens 64"
                              " --steps 1 --warmup 0 --reference false --out " + dir + "/t7b", dir);
  CHECK(bad_ref.code == 0);
  CHECK(json::parse(slurp(dir + "/t7b/bench_table.json"))["rows"][0]["ref_error"] == "exit code 1");
  CliResult missing = run_cli("bench " + dir + "/nope.yaml --table --seq-lens 64 --out " + dir + "/t7c", dir);
  CHECK(missing.code == 2);
  CHECK(missing.err.find("nope.yaml: no such model file") != std::string::npos);
}

TEST_CASE("cli: bench --seq-lens measures each scaling point in a child process of its own") {
  const std::string dir = scratch_dir("bench_scaling_child");
  // The default mode: the child is `transnormer bench --scaling-worker ...`, which takes no config.
  CliResult r = run_cli("bench " + source_dir() + "/configs/bench/quickstart_model.yaml --skip-model --probe-size 0"
                        " --seq-lens 32,64 --mixers norm_attention --causality causal --scaling-reps 1"
                        " --scaling-warmup 0 --threads 1 --json", dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const json report = json::parse(r.out);
  REQUIRE(report["scaling"].size() == 2);
  for (const json& row : report["scaling"]) {
    CHECK(row["mixer"] == "norm_attention");
    CHECK(row["fwd_bwd_s"].get<double>() > 0);
    CHECK(row["memory"] == "rss");  // measured in a child process: its resident set
  }
  CHECK((!report.contains("scaling_skipped") || report["scaling_skipped"].empty()));
  // Without a config (and not as a worker) bench is refused with the fix.
  CliResult none = run_cli("bench --skip-model", dir);
  CHECK(none.code == 2);
  CHECK(none.err.find("a config file is required") != std::string::npos);
}
