// Arguments that would waste the work are refused before it starts: an output file whose folder
// does not exist, an output folder that is a file, forward's --output naming its own --input,
// analyze's --r-step finer than one token, and options that do not apply (eval --checkpoint with
// --split). Each exits 2 with the option and the fix, having written nothing.
#include <doctest/doctest.h>

#include <filesystem>

#include "tests/app/cli_runner.h"
#include "tests/test_paths.h"

using namespace tn::test;

namespace {
bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("cli output paths: a file output in a missing folder is refused before the work") {
  const std::string dir = scratch_dir("out_missing_folder");
  // data stats prints its table before writing --out: nothing is printed when the folder is missing.
  const CliResult stats = run_cli("data stats " + source_dir() + "/configs/quickstart.yaml --out " + dir +
                                      "/nodir/stats.json",
                                  dir);
  CHECK(stats.code == 2);
  CHECK(has(stats.err, "--out " + dir + "/nodir/stats.json: the folder " + dir + "/nodir does not exist"));
  CHECK(stats.out.empty());
  // forward checks --output before it reads the checkpoint (here one that does not exist).
  write_text(dir + "/input.json", "{}");
  const CliResult fwd =
      run_cli("forward --checkpoint " + dir + "/none.safetensors --input " + dir + "/input.json --output " + dir +
                  "/nodir/out.json",
              dir);
  CHECK(fwd.code == 2);
  CHECK(has(fwd.err, "--output " + dir + "/nodir/out.json: the folder " + dir + "/nodir does not exist"));
  CHECK_FALSE(std::filesystem::exists(dir + "/nodir"));
}

TEST_CASE("cli output paths: forward --output naming its --input is refused and the input kept") {
  const std::string dir = scratch_dir("out_is_input");
  const std::string input = "{\"task\": \"lm\"}\n";
  write_text(dir + "/input.json", input);
  const CliResult r = run_cli("forward --checkpoint " + source_dir() + "/tests/golden/dec_t1/model.safetensors --input " +
                                  dir + "/input.json --output " + dir + "/./input.json",
                              dir);
  CHECK(r.code == 2);
  CHECK(has(r.err, "is the --input file"));
  CHECK(slurp(dir + "/input.json") == input);
}

TEST_CASE("cli output paths: an output folder that is a file is refused before the work") {
  const std::string dir = scratch_dir("out_folder_is_file");
  write_text(dir + "/afile", "keep\n");
  // bench --table: before any point is measured (these would take minutes).
  const CliResult bench = run_cli("bench " + source_dir() + "/configs/bench/table7/softmax.yaml --table --seq-lens "
                                  "1024,2048 --out " + dir + "/afile",
                                  dir);
  CHECK(bench.code == 2);
  CHECK(has(bench.err, dir + "/afile is a file, not a folder"));
  CHECK(!has(bench.err, "Not a directory"));
  // analyze locality and predict: before the checkpoint or run is read (here none exists).
  const CliResult loc = run_cli("analyze locality --checkpoint " + dir + "/none --data x.tokens --seq-len 64 --out " +
                                    dir + "/afile",
                                dir);
  CHECK(loc.code == 2);
  CHECK(has(loc.err, dir + "/afile is a file, not a folder"));
  const CliResult pred = run_cli("predict " + dir + "/norun --out " + dir + "/afile", dir);
  CHECK(pred.code == 2);
  CHECK(has(pred.err, dir + "/afile is a file, not a folder"));
  CHECK(slurp(dir + "/afile") == "keep\n");
}

TEST_CASE("cli output paths: analyze --r-step is refused below one token of --seq-len and above 1") {
  const std::string dir = scratch_dir("out_r_step");
  for (const std::string step : {"0.000001", "0", "-0.5", "1.5"}) {
    CAPTURE(step);
    const CliResult r = run_cli("analyze locality --checkpoint " + dir + "/none --data x.tokens --seq-len 64 --r-step " +
                                    step + " --out " + dir + "/loc",
                                dir);
    CHECK(r.code == 2);
    // 1/64 = 0.015625: a neighbourhood of the 64 tokens is a whole number of them.
    CHECK(has(r.err, "--r-step"));
    CHECK(has(r.err, "from 0.015625 up to 1"));
  }
  CHECK_FALSE(std::filesystem::exists(dir + "/loc"));
}

TEST_CASE("cli output paths: analyze locality names an encoder checkpoint for what it is") {
  const std::string dir = scratch_dir("out_analyze_encoder");
  const std::string ckpt = source_dir() + "/tests/golden/enc_t1_cls/model.safetensors";
  const CliResult r = run_cli("analyze locality --checkpoint " + ckpt + " --data x.tokens --seq-len 64 --out " + dir +
                                  "/loc",
                              dir);
  CHECK(r.code == 2);
  CHECK(has(r.err, ckpt + " holds an encoder"));
  CHECK(has(r.err, "decoder LM"));
}

TEST_CASE("cli output paths: eval --checkpoint refuses --split, which only a run has") {
  const std::string dir = scratch_dir("out_eval_split");
  const CliResult r = run_cli("eval --checkpoint " + dir + "/none --data x.tokens --seq-len 8 --split valid", dir);
  CHECK(r.code == 2);
  CHECK(has(r.err, "--split"));
  CHECK(has(r.err, "--checkpoint"));
}
