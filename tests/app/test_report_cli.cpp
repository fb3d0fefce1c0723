// `transnormer report`: on a made-up sweep folder it exits 0 and writes the four documents and
// the plots; a DIR that does not exist or an unknown metric exits 2 with a message naming it.
#include <doctest/doctest.h>

#include <filesystem>

#include "tests/app/cli_runner.h"
#include "tests/experiments/report_fixture.h"

using namespace tn::test;
namespace fs = std::filesystem;

TEST_CASE("report CLI: a sweep folder gives md, csv, json, html and plots, and bad DIRs exit 2") {
  const std::string dir = scratch_dir("report_cli");
  const fs::path sweep = fs::path(dir) / "sweep";
  write_standard_sweep(sweep);
  CliResult r = run_cli("report --metrics valid.ppl,test.ppl '" + sweep.string() + "' --by normalize", dir);
  INFO(r.err);
  CHECK(r.code == 0);
  for (const char* file : {"report.md", "report.csv", "report.json", "report.html", "plots/train_loss.svg",
                           "plots/final_test_ppl.svg"}) {
    INFO(file);
    CHECK(fs::is_regular_file(sweep / file));
  }
  CHECK(slurp((sweep / "report.md").string()).find("failed (2 of 3 seeds)") != std::string::npos);
  CHECK(slurp((sweep / "report.md").string()).find("| valid.ppl | n | valid.ppl (baseline) | test.ppl | n | test.ppl (paper) |") != std::string::npos);

  const std::string out = dir + "/elsewhere";
  CHECK(run_cli("report '" + sweep.string() + "' '" + (sweep / "normalize-scaling_seed-1").string() + "' --out '" + out + "'", dir).code == 0);
  CHECK(fs::is_regular_file(out + "/report.html"));

  CliResult missing = run_cli("report '" + dir + "/no_such_dir'", dir);
  CHECK(missing.code == 2);
  CHECK(missing.err.find("no_such_dir") != std::string::npos);
  CHECK(missing.err.find("sweep.json") != std::string::npos);
  CliResult metric = run_cli("report '" + sweep.string() + "' --metrics valid.bleu", dir);
  CHECK(metric.code == 2);
  CHECK(metric.err.find("valid.bleu") != std::string::npos);
  CHECK(run_cli("report", dir).code == 2);
}
