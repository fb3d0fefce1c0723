// `--smoke` of train and sweep: shipped specs and a shipped sweep run end to end in seconds (3
// steps, each evaluation on its first 2 batches) into scratch folders under $TMPDIR, the way a
// researcher checks a spec before a long run.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "tests/app/cli_runner.h"
#include "tests/app/tiny_spec.h"

using namespace tn::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// `transnormer <args>` with $TMPDIR set to `tmp`.
CliResult run_in_tmp(const std::string& args, const std::string& tmp, const std::string& dir) {
  return run_command_line("TMPDIR='" + tmp + "' TRANSNORMER_DATA='" + data_root() + "' OMP_NUM_THREADS=1 '" + binary() +
                              "' " + args,
                          dir + "/stdout.txt", dir + "/stderr.txt");
}

/// The one folder `tmp` holds whose name starts with `prefix`, or "".
std::string only_folder(const std::string& tmp, const std::string& prefix) {
  std::string found;
  for (const auto& e : fs::directory_iterator(tmp))
    if (e.path().filename().string().rfind(prefix, 0) == 0) found = found.empty() ? e.path().string() : "(several)";
  return found;
}

}  // namespace

TEST_CASE("cli: train --smoke runs a shipped spec in seconds into a scratch folder: 3 steps, 2 batches per evaluation") {
  const std::string dir = scratch_dir("smoke_train");
  for (const std::string name : {"quickstart", "text_t1"}) {
    const std::string tmp = dir + "/tmp_" + name;
    fs::create_directories(tmp);
    const std::string spec = std::string(TN_SOURCE_DIR) + (name == "quickstart" ? "/configs/quickstart.yaml"
                                                                                : "/configs/small/lra/text_t1.yaml");
    const CliResult r = run_in_tmp("train " + spec + " --smoke --threads 1", tmp, dir);
    INFO(r.err);
    REQUIRE(r.code == 0);
    const std::string out = only_folder(tmp, "transnormer-smoke-" + name + "-");
    REQUIRE_FALSE(out.empty());
    CHECK(r.err.find("smoke test of " + spec + ": 3 steps, 2 batches of each evaluation, into " + out) !=
          std::string::npos);
    const json summary = json::parse(slurp(out + "/summary.json"));
    CHECK(summary["train"]["steps"] == 3);
    CHECK(slurp(out + "/config.yaml").find("limit_eval_batches: 2") != std::string::npos);
    if (name == "text_t1") {
      // 2 batches of eval_batch_size examples, of IMDB's 2,500 validation and 25,000 test reviews.
      const int64_t batch = 16;
      CHECK(summary["valid"]["examples"] == 2 * batch);
      CHECK(summary["test"]["examples"] == 2 * batch);
    } else {
      // The quickstart: 2 batches of 16 sequences of 256 words.
      CHECK(summary["valid"]["tokens"] == 2 * 16 * 256);
      // Records only: no weights or optimizer state. What would need them says so.
      for (const char* file : {"checkpoint.safetensors", "checkpoint_best.safetensors", "train_state.safetensors"})
        CHECK_FALSE(fs::exists(out + "/" + file));
      const CliResult resumed = run_in_tmp("train --resume " + out, tmp, dir);
      CHECK(resumed.code == 0);
      CHECK(resumed.err.find("kept no checkpoint (a smoke test") != std::string::npos);
      CHECK(resumed.err.find("--set train.max_steps") == std::string::npos);  // no command that would fail
      {  // stopped before its summary: nothing to resume from, run it again
        const std::string copy = tmp + "/stopped";
        fs::copy(out, copy);
        fs::remove(copy + "/summary.json");
        const CliResult stopped = run_in_tmp("train --resume " + copy, tmp, dir);
        CHECK(stopped.code == 2);
        CHECK(stopped.err.find("a smoke test (train --smoke) keeps no checkpoint.safetensors; run it again") !=
              std::string::npos);
      }
      const CliResult evaluated = run_in_tmp("eval " + out, tmp, dir);
      CHECK(evaluated.code == 2);
      CHECK(evaluated.err.find("a smoke test, train --smoke, writes its records only") != std::string::npos);
      const CliResult generated = run_in_tmp("generate --checkpoint " + out + " --max-new-tokens 2", tmp, dir);
      CHECK(generated.code == 2);
      CHECK(generated.err.find("the run kept no checkpoint.safetensors (a smoke test") != std::string::npos);
      // A smoke test from a smoke run (which kept no weights) starts from random weights, and says so.
      const CliResult warm = run_in_tmp(
          "train " + spec + " --smoke --threads 1 --set train.max_steps=10 --set train.init_from=" + out, tmp, dir);
      CHECK(warm.code == 0);
      CHECK(warm.err.find("--smoke runs with train.max_steps=3 (its own value), not --set train.max_steps=10") !=
            std::string::npos);
      CHECK(warm.err.find("holds no weights yet (not trained, or a smoke test, which keeps none): this smoke test "
                          "starts from random weights") != std::string::npos);
    }
    CHECK_FALSE(fs::exists("runs/" + name));  // nothing in the default run folder
  }
  // A smoke dry run names the scratch folder it would make, not the spec's run folder.
  const CliResult dry = run_in_tmp("train " + std::string(TN_SOURCE_DIR) + "/configs/quickstart.yaml --smoke --dry-run",
                                   dir + "/tmp_quickstart", dir);
  CHECK(dry.code == 0);
  CHECK(dry.out.find("# run directory: " + dir + "/tmp_quickstart/transnormer-smoke-quickstart-XXXXXX (new)") !=
        std::string::npos);
  // A TMPDIR that names no folder is bad input, said as such.
  const CliResult nowhere = run_in_tmp("train " + std::string(TN_SOURCE_DIR) + "/configs/quickstart.yaml --smoke",
                                       dir + "/no_such_tmp", dir);
  CHECK(nowhere.code == 2);
  CHECK(nowhere.err.find("TMPDIR=" + dir + "/no_such_tmp is not a folder") != std::string::npos);
}

TEST_CASE("cli: sweep --smoke runs every point of a shipped sweep in seconds, into a scratch folder") {
  const std::string dir = scratch_dir("smoke_sweep");
  const std::string tmp = dir + "/tmp";
  fs::create_directories(tmp);
  const CliResult r = run_in_tmp("sweep " + std::string(TN_SOURCE_DIR) +
                                     "/configs/ablations/diag_norm_combination.yaml --smoke --jobs 2 --threads-per-job 1",
                                 tmp, dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string out = only_folder(tmp, "transnormer-smoke-diag_norm_combination-");
  REQUIRE_FALSE(out.empty());
  CHECK(r.err.find("9 done, 0 failed, 0 diverged, 0 pending") != std::string::npos);
  const json index = json::parse(slurp(out + "/sweep.json"));
  REQUIRE(index["points"].size() == 9);
  for (const json& p : index["points"]) {
    CHECK(p["state"] == "done");
    CHECK(p["command"].get<std::string>().find(" --smoke") != std::string::npos);
    CHECK(json::parse(slurp(out + "/" + p["dir"].get<std::string>() + "/summary.json"))["train"]["steps"] == 3);
  }
  CHECK(index["command_line"]["smoke"] == true);
  // The real sweep into that folder would take the smoke runs for results: refused, the index kept.
  const std::string kept = slurp(out + "/sweep.json");
  const CliResult real = run_in_tmp("sweep " + std::string(TN_SOURCE_DIR) +
                                        "/configs/ablations/diag_norm_combination.yaml --out " + out,
                                    tmp, dir);
  CHECK(real.code == 2);
  CHECK(real.err.find("holds a smoke test of the sweep") != std::string::npos);
  CHECK(slurp(out + "/sweep.json") == kept);
  // A smoke test runs here, never on Slurm.
  CHECK(run_in_tmp("sweep " + std::string(TN_SOURCE_DIR) +
                       "/configs/ablations/diag_norm_combination.yaml --smoke --launcher slurm --dry-run",
                   tmp, dir)
            .code == 2);
}

TEST_CASE("cli: a smoke test never writes over a real run, runs a fine-tune before its pretraining, and says what to rerun") {
  const std::string dir = scratch_dir("smoke_guards");
  const std::string tmp = dir + "/tmp";
  fs::create_directories(tmp);
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  const std::string spec = dir + "/tiny.yaml";
  REQUIRE(run_in_tmp("train " + spec + " --threads 1 --set train.max_steps=4 --out " + dir + "/real", tmp, dir).code == 0);
  const std::string checkpoint = slurp(dir + "/real/checkpoint.safetensors");
  // --smoke --out a real run: refused with or without --overwrite, the run left as it was.
  for (const std::string flag : {"", " --overwrite"}) {
    const CliResult r = run_in_tmp("train " + spec + " --smoke --out " + dir + "/real" + flag, tmp, dir);
    CHECK(r.code == 2);
    CHECK(r.err.find("holds a run that is not a smoke test: a smoke test never writes over a run, even with "
                     "--overwrite") != std::string::npos);
  }
  CHECK(slurp(dir + "/real/checkpoint.safetensors") == checkpoint);
  // A smoke test's folder again: --overwrite starts it again; no --resume is offered (nothing to resume).
  REQUIRE(run_in_tmp("train " + spec + " --smoke --out '" + dir + "/smoke run'", tmp, dir).code == 0);
  const CliResult again = run_in_tmp("train " + spec + " --smoke --out '" + dir + "/smoke run'", tmp, dir);
  CHECK(again.code == 2);
  CHECK(again.err.find("'" + dir + "/smoke run' holds a smoke test (train --smoke, records only: nothing to "
                       "resume): start it again with --overwrite") != std::string::npos);
  CHECK(run_in_tmp("train " + spec + " --smoke --overwrite --out '" + dir + "/smoke run'", tmp, dir).code == 0);
  // A fine-tune whose pretrained run does not exist yet: its smoke test runs from random weights.
  const CliResult fine = run_in_tmp("train " + spec + " --smoke --set train.init_from=" + dir + "/not_yet", tmp, dir);
  INFO(fine.err);
  CHECK(fine.code == 0);
  CHECK(fine.err.find("train.init_from " + dir + "/not_yet holds no weights yet") != std::string::npos);
  // ... and from the real run's weights when it exists.
  const CliResult warm = run_in_tmp("train " + spec + " --smoke --set train.init_from=" + dir + "/real", tmp, dir);
  CHECK(warm.code == 0);
  CHECK(warm.err.find("init_from " + dir + "/real/checkpoint.safetensors: ") != std::string::npos);
  // A smoke test that fails before it writes leaves no empty scratch folder behind.
  const CliResult failed = run_in_tmp("train " + spec + " --smoke --set data.train=no/such.tokens", tmp, dir);
  CHECK(failed.code != 0);
  for (const auto& e : fs::directory_iterator(tmp)) CHECK_MESSAGE(!fs::is_empty(e.path()), e.path().string());
}
