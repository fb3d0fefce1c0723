// `transnormer report`: on a made-up sweep folder it exits 0 and writes the four documents and
// the plots; a DIR that does not exist or an unknown metric exits 2 with a message naming it.
#include <doctest/doctest.h>

#include <algorithm>

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

  // Again with fewer metrics: the earlier report's plot of test.ppl goes, a file of the user's stays.
  write_text((sweep / "plots/mine.svg").string(), "<svg/>");
  CHECK(run_cli("report --metrics valid.ppl '" + sweep.string() + "' --by normalize", dir).code == 0);
  CHECK_FALSE(fs::exists(sweep / "plots/final_test_ppl.svg"));
  CHECK(fs::is_regular_file(sweep / "plots/final_valid_ppl.svg"));
  CHECK(fs::is_regular_file(sweep / "plots/mine.svg"));

  const std::string out = dir + "/elsewhere";
  // A sweep and one of its runs, or a folder given twice: each run is read once, with a warning
  // (the run given again had made a row of its own, and a folder twice had doubled every n).
  CliResult again = run_cli("report '" + sweep.string() + "' '" + (sweep / "normalize-scaling_seed-1").string() +
                                "' '" + sweep.string() + "/' --out '" + out + "'", dir);
  CHECK(again.code == 0);
  CHECK(fs::is_regular_file(out + "/report.html"));
  CHECK(again.err.find("the run " + (sweep / "normalize-scaling_seed-1").string() + " is read already (from " +
                       sweep.string() + ")") != std::string::npos);
  CHECK(again.err.find(sweep.string() + "/ is given twice (also as " + sweep.string() + "): read once") !=
        std::string::npos);
  CHECK(again.err.find("pools two runs") == std::string::npos);
  const std::string csv = slurp(out + "/report.csv");  // the rows and run counts of the sweep alone
  CHECK(csv.find("\nnormalize=scaling,done,3,3,") != std::string::npos);
  CHECK(csv.find("\nnormalize=srmsnorm,failed (2 of 3 seeds),3,1,") != std::string::npos);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 3);

  // The same run twice (a copy in a second folder): pooled, with a warning naming both folders.
  fs::copy(sweep / "normalize-scaling_seed-1", fs::path(dir) / "copy", fs::copy_options::recursive);
  CliResult twice = run_cli("report '" + (sweep / "normalize-scaling_seed-1").string() + "' '" + dir + "/copy' --out '" +
                                dir + "/twice'", dir);
  CHECK(twice.code == 0);
  CHECK(twice.err.find("pools two runs of seed 1") != std::string::npos);
  CHECK(twice.err.find(dir + "/copy") != std::string::npos);

  CliResult missing = run_cli("report '" + dir + "/no_such_dir'", dir);
  CHECK(missing.code == 2);
  CHECK(missing.err.find("no_such_dir") != std::string::npos);
  CHECK(missing.err.find("sweep.json") != std::string::npos);
  CliResult metric = run_cli("report '" + sweep.string() + "' --metrics valid.bleu", dir);
  CHECK(metric.code == 2);
  CHECK(metric.err.find("valid.bleu") != std::string::npos);
  CHECK(run_cli("report", dir).code == 2);
  CliResult by = run_cli("report '" + sweep.string() + "' --by ''", dir);
  CHECK(by.code == 2);
  CHECK(by.err.find("--by: give a config key or sweep axis") != std::string::npos);
}

TEST_CASE("scripts/keep_run_records.sh keeps a sweep's records, never checkpoints, train states or predictions") {
  const std::string dir = scratch_dir("keep_records");
  const std::string src = dir + "/sweep", dest = dir + "/kept";
  const std::string root = dir + "/data";  // the data root named in the logs, replaced in the copies
  fs::create_directories(root);
  write_text(src + "/sweep.json", "{\"points\": []}\n");
  for (const char* run : {"done_seed-1", "stopped_seed-1"}) {
    for (const char* f : {"config.yaml", "metrics.jsonl", "run.json", "checkpoint.safetensors",
                          "checkpoint_best.safetensors", "train_state.safetensors", "predictions/valid.jsonl"})
      write_text(src + "/" + run + "/" + f, std::string(f) + "\n");
    write_text(src + "/" + run + "/train.log", "read " + root + "/lra/imdb\n");
  }
  write_text(src + "/done_seed-1/summary.json", "{}\n");
  const std::string script = "TRANSNORMER_DATA='" + root + "' bash '" + source_dir() + "/scripts/keep_run_records.sh' ";
  auto kept = [&](const std::string& f) { return fs::exists(dest + "/" + f); };

  REQUIRE(std::system((script + "'" + src + "' '" + dest + "' 2>/dev/null").c_str()) == 0);
  CHECK(kept("sweep.json"));
  CHECK(kept("done_seed-1/summary.json"));
  CHECK(kept("stopped_seed-1/metrics.jsonl"));
  CHECK(slurp(dest + "/stopped_seed-1/train.log") == "read <data root>/lra/imdb\n");
  for (const char* run : {"done_seed-1/", "stopped_seed-1/"})
    for (const char* f : {"checkpoint.safetensors", "checkpoint_best.safetensors", "train_state.safetensors",
                          "predictions", "run.json"}) {
      INFO(run << f);
      CHECK_FALSE(kept(std::string(run) + f));
    }
  REQUIRE(std::system((script + "'" + src + "' '" + dest + "' 2>/dev/null").c_str()) == 0);  // again: same records

  // A DEST holding what records must not keep (an older copy) is refused, naming the files.
  auto keep = [&](const std::string& args) {
    return run_command_line(script + args, dir + "/out.txt", dir + "/err.txt");
  };
  for (const char* f : {"done_seed-1/train_state.safetensors", "stopped_seed-1/predictions/test.jsonl"}) {
    INFO(f);
    write_text(dest + "/" + f, "old\n");
    const CliResult refused = keep("'" + src + "' '" + dest + "'");
    CHECK(refused.code == 2);
    CHECK(refused.err.find(f) != std::string::npos);
    CHECK(refused.err.find("delete them") != std::string::npos);
    fs::remove(dest + "/" + f);
  }
  const CliResult option = keep("--resume-state '" + src + "' '" + dest + "'");  // no such mode
  CHECK(option.code == 2);
  CHECK(option.err.find("unknown option --resume-state") != std::string::npos);
  CHECK(keep("'" + dir + "/nothing' '" + dest + "'").code == 2);  // not a sweep folder
}
