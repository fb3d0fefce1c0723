// End to end through the CLI on real WikiText-103 text: a tiny T1 model trains for a few steps,
// writes its run directory (docs/cli/run-folder.md), and `eval` in a new process reproduces
// the summary's test loss exactly. Small shapes keep it to a few seconds.
#include <doctest/doctest.h>

#include <csignal>
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/app/cli_runner.h"
#include "tests/app/tiny_spec.h"

using namespace tn::test;
using nlohmann::json;


TEST_CASE("cli: train writes the run directory, the loss falls, eval reproduces the test loss") {
  const std::string dir = scratch_dir("train");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  CliResult r = run_cli("train " + dir + "/tiny.yaml --out " + dir + "/run", dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.err.find("tok/s") != std::string::npos);  // progress goes to stderr
  CHECK(r.out.empty());                             // nothing mixed into stdout

  const json summary = json::parse(slurp(dir + "/run/summary.json"));
  for (const char* key : {"valid", "test", "train", "peak_rss_mb", "unigram_test_ppl", "params"})
    CHECK(summary.contains(key));
  CHECK(summary["train"]["steps"] == 30);
  CHECK(summary["test"]["ppl"].get<double>() ==
        doctest::Approx(std::exp(summary["test"]["loss"].get<double>())));
  // 30 steps: far better than guessing uniformly over the vocabulary.
  CHECK(summary["test"]["ppl"].get<double>() < 0.5 * summary["vocab_size"].get<double>());
  CHECK(summary["unigram_test_ppl"].get<double>() > 1.0);
  // Evaluation throughput: every test target was a position forwarded (and valid's too).
  const json& train = summary["train"];
  CHECK(train["eval_tokens"].get<int64_t>() > summary["test"]["tokens"].get<int64_t>());
  CHECK(train["eval_tokens_per_s"].get<double>() ==
        doctest::Approx(train["eval_tokens"].get<double>() / train["eval_s"].get<double>()));

  // metrics.jsonl: training lines then evaluation lines; the logged loss falls.
  std::istringstream lines(slurp(dir + "/run/metrics.jsonl"));
  std::string line;
  std::vector<double> train_losses;
  int evals = 0;
  while (std::getline(lines, line)) {
    json rec = json::parse(line);
    if (rec.contains("split")) ++evals;
    else train_losses.push_back(rec["loss"].get<double>());
  }
  REQUIRE(train_losses.size() == 3);
  CHECK(train_losses.back() < train_losses.front());
  CHECK(evals == 3);  // valid at 15 and 30, test at 30

  // The resolved config reloads; eval in a new process gives the same test loss exactly.
  CHECK(slurp(dir + "/run/config.yaml").find("vocab_size") != std::string::npos);
  CliResult e = run_cli("eval " + dir + "/run", dir);
  INFO(e.err);
  REQUIRE(e.code == 0);
  const json ev = json::parse(e.out);
  CHECK(ev["loss"].get<double>() == summary["test"]["loss"].get<double>());
  CHECK(ev["tokens"] == summary["test"]["tokens"]);
  // The log gives the evaluation's throughput: the positions forwarded (every scored token, and
  // any padding of the last block), the seconds and their ratio.
  const size_t logged = e.err.find("test: ");
  REQUIRE(logged != std::string::npos);
  CHECK(std::stoll(e.err.substr(logged + 6)) >= summary["test"]["tokens"].get<int64_t>());
  CHECK(e.err.find(" tokens/s", logged) != std::string::npos);
  // The run's own config.yaml names that run (not runs/<name> of the spec inside it).
  CliResult by_config = run_cli("eval " + dir + "/run/config.yaml", dir);
  INFO(by_config.err);
  REQUIRE(by_config.code == 0);
  CHECK(json::parse(by_config.out)["loss"].get<double>() == ev["loss"].get<double>());

  CliResult c = run_cli("eval --checkpoint " + dir + "/run/checkpoint.safetensors --data " + dir +
                            "/small.test.tokens --seq-len 32 --batch 3",
                        dir);
  INFO(c.err);
  REQUIRE(c.code == 0);
  CHECK(json::parse(c.out)["loss"].get<double>() ==
        doctest::Approx(summary["test"]["loss"].get<double>()).epsilon(1e-6));
  // A run folder stands for its checkpoint, as in generate and analyze.
  CliResult by_dir = run_cli("eval --checkpoint " + dir + "/run --data " + dir + "/small.test.tokens --seq-len 32 --batch 3", dir);
  INFO(by_dir.err);
  REQUIRE(by_dir.code == 0);
  CHECK(json::parse(by_dir.out)["loss"].get<double>() == json::parse(c.out)["loss"].get<double>());
  // An empty data file is named as such.
  write_text(dir + "/empty.tokens", "");
  CliResult empty = run_cli("eval --checkpoint " + dir + "/run/checkpoint.safetensors --data " + dir +
                                "/empty.tokens --seq-len 32",
                            dir);
  CHECK(empty.code == 2);
  CHECK(empty.err.find("empty.tokens: holds no words") != std::string::npos);
}

TEST_CASE("cli: a diverging run stops naming the step and keeps the last good checkpoint") {
  const std::string dir = scratch_dir("diverge");
  // lr(0) = 1e-7 for update 1, then a huge rate: update 2 sends the weights to infinity.
  std::string spec = tiny_spec(dir);
  spec.replace(spec.find("lr: 3e-3"), 8, "lr: 1e38");
  spec.replace(spec.find("warmup_steps: 5"), 15, "warmup_steps: 2");
  spec.replace(spec.find("eval_every: 15"), 14, "eval_every: 1");
  write_text(dir + "/diverge.yaml", spec);
  CliResult r = run_cli("train " + dir + "/diverge.yaml --out " + dir + "/run", dir);
  CHECK(r.code == 1);
  CHECK(r.err.find("non-finite") != std::string::npos);
  CHECK(r.err.find("step 2") != std::string::npos);
  CHECK(r.err.find("keeps the last good checkpoint, from step 1") != std::string::npos);
  // The step-1 checkpoint is still there and evaluates to a finite loss.
  CliResult e = run_cli("eval --checkpoint " + dir + "/run/checkpoint.safetensors --data " + dir +
                            "/small.test.tokens --seq-len 32",
                        dir);
  INFO(e.err);
  REQUIRE(e.code == 0);
  CHECK(std::isfinite(json::parse(e.out)["loss"].get<double>()));
}

TEST_CASE("cli: a run diverging before its first checkpoint says that none was written") {
  const std::string dir = scratch_dir("diverge_early");
  std::string spec = tiny_spec(dir);
  spec.replace(spec.find("lr: 3e-3"), 8, "lr: 1e38");
  spec.replace(spec.find("warmup_steps: 5"), 15, "warmup_steps: 2");
  write_text(dir + "/diverge.yaml", spec);
  CliResult r = run_cli("train " + dir + "/diverge.yaml --out " + dir + "/run", dir);
  CHECK(r.code == 1);
  INFO(r.err);
  CHECK(r.err.find("non-finite at step") != std::string::npos);
  CHECK(r.err.find("no checkpoint was written yet") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir + "/run/checkpoint.safetensors"));
}

TEST_CASE("cli: precision bf16 trains to the f32 run's test loss within 2 %, and resumes exactly") {
  const std::string dir = scratch_dir("bf16");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  CliResult f32 = run_cli("train " + dir + "/tiny.yaml --out " + dir + "/f32", dir);
  CliResult bf16 = run_cli("train " + dir + "/tiny.yaml --set train.precision=bf16 --out " + dir + "/bf16", dir);
  INFO(bf16.err);
  REQUIRE(f32.code == 0);
  REQUIRE(bf16.code == 0);
  const double a = json::parse(slurp(dir + "/f32/summary.json"))["test"]["loss"].get<double>();
  const double b = json::parse(slurp(dir + "/bf16/summary.json"))["test"]["loss"].get<double>();
  CHECK(a != b);  // the products really were rounded
  CHECK(std::abs(a - b) / a < 0.02);
  // Resumed half way, the bf16 run gives the same numbers exactly: the weights' bf16 copies that
  // the optimizer keeps from step to step equal a fresh conversion of the loaded weights.
  CliResult half = run_cli("train " + dir + "/tiny.yaml --set train.precision=bf16 --set train.max_steps=15 --out " +
                               dir + "/bf16_parts", dir);
  REQUIRE(half.code == 0);
  CliResult rest = run_cli("train " + dir + "/tiny.yaml --set train.precision=bf16 --resume --out " + dir + "/bf16_parts", dir);
  INFO(rest.err);
  REQUIRE(rest.code == 0);
  CHECK(json::parse(slurp(dir + "/bf16_parts/summary.json"))["test"]["loss"].get<double>() == b);
}

TEST_CASE("cli: --resume continues a run exactly: 15 + 15 steps equal 30 in one go") {
  const std::string dir = scratch_dir("resume");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  CliResult whole = run_cli("train " + dir + "/tiny.yaml --out " + dir + "/whole", dir);
  REQUIRE(whole.code == 0);
  CliResult first = run_cli("train " + dir + "/tiny.yaml --set train.max_steps=15 --out " + dir + "/parts", dir);
  INFO(first.err);
  REQUIRE(first.code == 0);
  CHECK(std::filesystem::exists(dir + "/parts/train_state.safetensors"));
  // As if the run had stopped after writing a newer train state but before its checkpoint (the
  // save keeps the state of step 15 as the previous one, then writes the new state): the kept
  // previous state still matches the checkpoint, and is the one used.
  CHECK_FALSE(std::filesystem::exists(dir + "/parts/train_state.previous.safetensors"));  // one save only
  std::filesystem::rename(dir + "/parts/train_state.safetensors", dir + "/parts/train_state.previous.safetensors");
  std::filesystem::copy_file(dir + "/whole/train_state.safetensors",
                             dir + "/parts/train_state.safetensors",
                             std::filesystem::copy_options::overwrite_existing);
  CliResult second = run_cli("train " + dir + "/tiny.yaml --resume --out " + dir + "/parts", dir);
  INFO(second.err);
  REQUIRE(second.code == 0);
  CHECK(second.err.find("resuming") != std::string::npos);
  // The first part's --set train.max_steps=15 is not repeated: the run trains on to the spec's 30, and says so.
  CHECK(second.err.find("train.max_steps 15 -> 30") != std::string::npos);
  const json a = json::parse(slurp(dir + "/whole/summary.json"));
  const json b = json::parse(slurp(dir + "/parts/summary.json"));
  // Same weights, optimizer moments, batch order and dropout masks: the same numbers, exactly.
  CHECK(a["test"]["loss"].get<double>() == b["test"]["loss"].get<double>());
  CHECK(a["valid"]["loss"].get<double>() == b["valid"]["loss"].get<double>());
  CHECK(a["train"]["tokens"] == b["train"]["tokens"]);
  auto loss_at = [](const std::string& metrics, int64_t step) { return train_value(metrics, step, "loss"); };
  CHECK(loss_at(slurp(dir + "/whole/metrics.jsonl"), 30) == loss_at(slurp(dir + "/parts/metrics.jsonl"), 30));
  CHECK(loss_at(slurp(dir + "/parts/metrics.jsonl"), 10) == loss_at(slurp(dir + "/whole/metrics.jsonl"), 10));

  // A finished run has nothing to resume: it says so, with the command that trains longer, and
  // writes nothing (it used to run its final evaluations again).
  const std::string summary = slurp(dir + "/parts/summary.json"), metrics = slurp(dir + "/parts/metrics.jsonl"),
                    history = slurp(dir + "/parts/run.json");
  CliResult finished = run_cli("train " + dir + "/tiny.yaml --resume --out " + dir + "/parts", dir);
  CHECK(finished.code == 0);
  CHECK(finished.err.find("nothing to resume: the run is finished (30 steps of train.max_steps 30") != std::string::npos);
  CHECK(finished.err.find("--resume " + dir + "/parts --set train.max_steps=60") != std::string::npos);
  CHECK(slurp(dir + "/parts/summary.json") == summary);
  CHECK(slurp(dir + "/parts/metrics.jsonl") == metrics);
  CHECK(slurp(dir + "/parts/run.json") == history);
  // Finished with another lr than the one asked now: refused as a resume would be, naming the key.
  CliResult other_lr =
      run_cli("train " + dir + "/tiny.yaml --resume --set train.optimizer.lr=0.5 --out " + dir + "/parts", dir);
  CHECK(other_lr.code == 2);
  CHECK(other_lr.err.find("train.optimizer.lr: the run was trained with") != std::string::npos);
  CHECK(other_lr.err.find("nothing to resume") == std::string::npos);
  CHECK(slurp(dir + "/parts/summary.json") == summary);
  // A run stopped after its last step, before its final evaluations (no summary of that step),
  // finishes them only.
  std::filesystem::remove(dir + "/parts/summary.json");
  CliResult done = run_cli("train " + dir + "/tiny.yaml --resume --out " + dir + "/parts", dir);
  CHECK(done.code == 0);
  CHECK(done.err.find("final evaluations only") != std::string::npos);
  CHECK(json::parse(slurp(dir + "/parts/summary.json"))["test"]["loss"].get<double>() ==
        a["test"]["loss"].get<double>());
  // Fewer steps than done, another spec, or no run at all: exit 2 with the reason.
  CliResult fewer = run_cli("train " + dir + "/tiny.yaml --resume --set train.max_steps=20 --out " + dir + "/parts", dir);
  CHECK(fewer.code == 2);
  CHECK(fewer.err.find("below the 30 steps") != std::string::npos);
  CHECK(slurp(dir + "/parts/config.yaml").find("max_steps: 30") != std::string::npos);  // untouched
  // run.json keeps no session of the refused resume (one was left "running" for good).
  const json refused = json::parse(slurp(dir + "/parts/run.json"))["sessions"].back();
  CHECK(refused["outcome"] == "done");
  CliResult other = run_cli("train " + dir + "/tiny.yaml --resume --set model.d_model=64 --set train.max_steps=60 --out " + dir + "/parts", dir);
  CHECK(other.code == 2);
  // --dry-run checks the spec against the run's config.yaml as the run does.
  CHECK(run_cli("train " + dir + "/tiny.yaml --resume --dry-run --set model.d_model=64 --set train.max_steps=60 --out " + dir + "/parts", dir).code == 2);
  CHECK(run_cli("train " + dir + "/tiny.yaml --resume --dry-run --set train.max_steps=40 --out " + dir + "/parts", dir).code == 0);
  CHECK(other.err.find("config.yaml:") != std::string::npos);
  CHECK(other.err.find("d_model") != std::string::npos);
  CliResult none = run_cli("train " + dir + "/tiny.yaml --resume --out " + dir + "/empty", dir);
  CHECK(none.code == 2);
  CHECK(none.err.find("nothing to resume") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir + "/empty"));  // not created
  // A finished run kept without its checkpoint (a results record): no advice to --overwrite it,
  // whether it is asked to finish (nothing to do) or to train longer (nothing to train from).
  std::filesystem::remove(dir + "/whole/checkpoint.safetensors");
  CliResult kept = run_cli("train " + dir + "/tiny.yaml --resume --out " + dir + "/whole", dir);
  CHECK(kept.code == 0);
  CHECK(kept.err.find("the run is finished") != std::string::npos);
  CHECK(kept.err.find("--overwrite") == std::string::npos);
  CliResult longer = run_cli("train " + dir + "/tiny.yaml --resume --set train.max_steps=60 --out " + dir + "/whole", dir);
  CHECK(longer.code == 2);
  CHECK(longer.err.find("the run is finished") != std::string::npos);
  CHECK(longer.err.find("--overwrite") == std::string::npos);
  write_text(dir + "/parts/metrics.jsonl", "42\n");
  CliResult garbage = run_cli("train " + dir + "/tiny.yaml --resume --set train.max_steps=31 --out " + dir + "/parts", dir);
  CHECK(garbage.code == 2);
  CHECK(garbage.err.find("metrics.jsonl:1") != std::string::npos);
}

TEST_CASE("cli: a cosine run is extended as its warning says: --resume with train.max_steps and total_steps raised") {
  const std::string dir = scratch_dir("resume_cosine");
  std::string spec = tiny_spec(dir);
  const std::string inverse_sqrt = "schedule: {name: inverse_sqrt, warmup_steps: 5}";
  spec.replace(spec.find(inverse_sqrt), inverse_sqrt.size(), "schedule: {name: cosine, warmup_steps: 2}");
  write_text(dir + "/cosine.yaml", spec);
  REQUIRE(run_cli("train " + dir + "/cosine.yaml --set train.max_steps=10 --out " + dir + "/run", dir).code == 0);
  // config.yaml records total_steps 10; raised alone, max_steps gets the warning naming the fix.
  CliResult dry = run_cli("train --resume " + dir + "/run --dry-run --set train.max_steps=20", dir);
  CHECK(dry.code == 0);
  CHECK(dry.out.find("set total_steps to 20") != std::string::npos);
  // The fix is accepted (it was refused as another spec) and logged.
  CliResult longer = run_cli("train --resume " + dir + "/run --set train.max_steps=20 --set train.schedule.total_steps=20", dir);
  INFO(longer.err);
  REQUIRE(longer.code == 0);
  CHECK(longer.err.find("train.schedule.total_steps 10 -> 20") != std::string::npos);
  CHECK(longer.err.find("set total_steps to") == std::string::npos);
  // From step 11 on, the lr is that of a 20-step cosine: the one a run of 20 steps in one go logs.
  REQUIRE(run_cli("train " + dir + "/cosine.yaml --set train.max_steps=20 --out " + dir + "/whole", dir).code == 0);
  auto lr_at = [](const std::string& metrics, int64_t step) { return train_value(metrics, step, "lr"); };
  const double extended = lr_at(slurp(dir + "/run/metrics.jsonl"), 20), whole = lr_at(slurp(dir + "/whole/metrics.jsonl"), 20);
  CHECK(extended > 0);
  CHECK(extended == whole);
  // Other keys are still refused, naming what may change.
  CliResult other = run_cli("train --resume " + dir + "/run --set train.max_steps=30 --set train.schedule.warmup_steps=3", dir);
  CHECK(other.code == 2);
  CHECK(other.err.find("only train.max_steps, threads and the schedule's total_steps may change") != std::string::npos);
}

TEST_CASE("cli: SIGTERM finishes the step, saves, exits 143, and --resume then equals an uninterrupted run") {
  const std::string dir = scratch_dir("sigterm");
  const std::string spec = dir + "/tiny.yaml";
  write_text(spec, tiny_spec(dir));
  const std::string args = " --set train.max_steps=200 --set train.eval_every=100 --threads 1 --out ";
  CliResult whole = run_cli("train " + spec + args + dir + "/whole", dir);
  REQUIRE(whole.code == 0);

  // Stop the run once it has logged step 20 (or more), like a scheduler preempting it.
  CliChild child = spawn_cli("train " + spec + args + dir + "/parts", dir, "parts");
  const std::string metrics = dir + "/parts/metrics.jsonl";
  for (int i = 0; i < 6000 && slurp(metrics).find("\"step\":20,") == std::string::npos; ++i) ::usleep(5000);
  ::kill(child.pid, SIGTERM);
  CliResult stopped = wait_cli(child);
  INFO(stopped.err);
  REQUIRE(stopped.code == 143);
  CHECK(stopped.err.find("stopped by SIGTERM after step") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir + "/parts/summary.json"));  // not finished
  CHECK(std::filesystem::exists(dir + "/parts/checkpoint.safetensors"));

  // The printed command, run as printed: `transnormer train --resume DIR` (the overrides are in
  // DIR/config.yaml).
  const std::string from = "continue with `transnormer ";
  const size_t at = stopped.err.find(from);
  REQUIRE(at != std::string::npos);
  const std::string printed = stopped.err.substr(at + from.size(), stopped.err.find('`', at + from.size()) - at - from.size());
  CHECK(printed == "train --resume " + dir + "/parts");
  CliResult resumed = run_cli(printed, dir);
  INFO(resumed.err);
  REQUIRE(resumed.code == 0);
  const json a = json::parse(slurp(dir + "/whole/summary.json"));
  const json b = json::parse(slurp(dir + "/parts/summary.json"));
  CHECK(a["test"]["loss"].get<double>() == b["test"]["loss"].get<double>());
  CHECK(a["valid"]["loss"].get<double>() == b["valid"]["loss"].get<double>());
  CHECK(a["train"]["tokens"] == b["train"]["tokens"]);
  // Every training-log loss, including the window the stop cut in two, is the same.
  CHECK(train_losses(slurp(dir + "/whole/metrics.jsonl")) == train_losses(slurp(dir + "/parts/metrics.jsonl")));
}

TEST_CASE("cli: grad_stats leaves training unchanged and logs per-layer score gradients, and analyze locality writes l(r)") {
  const std::string dir = scratch_dir("analysis");
  const std::string spec = dir + "/tiny.yaml";
  write_text(spec, tiny_spec(dir));
  CliResult plain = run_cli("train " + spec + " --threads 1 --out " + dir + "/plain", dir);
  REQUIRE(plain.code == 0);
  CliResult with = run_cli("train " + spec + " --set train.analysis.grad_stats=true --threads 1 --out " + dir + "/stats", dir);
  INFO(with.err);
  REQUIRE(with.code == 0);
  const json a = json::parse(slurp(dir + "/plain/summary.json"));
  const json b = json::parse(slurp(dir + "/stats/summary.json"));
  CHECK(a["test"]["loss"].get<double>() == b["test"]["loss"].get<double>());  // the analysis only reads
  CHECK_FALSE(a.contains("analysis"));
  const json& layers = b["analysis"]["grad_stats"]["layers"];
  REQUIRE(layers.size() == 2);
  CHECK(layers[0]["mixer"] == "diag");
  CHECK(layers[1]["mixer"] == "norm_attention");
  CHECK(layers[1]["n"] == 3);  // logged at steps 10, 20, 30
  CHECK(layers[1]["rsd"].get<double>() > 0);
  std::istringstream lines(slurp(dir + "/stats/metrics.jsonl"));
  int logged = 0;
  for (std::string line; std::getline(lines, line);) {
    const json r = json::parse(line);
    if (r.contains("split")) continue;
    REQUIRE(r["grad_scores"].size() == 2);
    CHECK(r["grad_scores"][0].get<double>() > 0);
    ++logged;
  }
  CHECK(logged == 3);

  CliResult loc = run_cli("analyze locality --checkpoint " + dir + "/stats/checkpoint.safetensors --data " + dir +
                              "/small.test.tokens --seq-len 32 --samples 3 --r-step 0.25 --out " + dir + "/stats",
                          dir);
  INFO(loc.err);
  REQUIRE(loc.code == 0);
  const json l = json::parse(slurp(dir + "/stats/locality.json"));
  CHECK(l["seq_len"] == 32);
  CHECK(l["r"] == json::array({0.0, 0.25, 0.5, 0.75, 1.0}));
  REQUIRE(l["layers"].size() == 2);
  for (const json& layer : l["layers"]) {
    const std::vector<double> v = layer["l"].get<std::vector<double>>();
    CHECK(v.back() == doctest::Approx(1.0));  // the whole row
    for (size_t i = 1; i < v.size(); ++i) CHECK(v[i] >= v[i - 1] - 1e-12);
  }
  // The diag layer attends inside blocks of 16: its window of m >= 16 positions holds everything.
  CHECK(l["layers"][0]["l"][2].get<double>() == doctest::Approx(1.0));
  // The run's folder stands for its checkpoint, as for generate: the same curves.
  CliResult by_folder = run_cli("analyze locality --checkpoint " + dir + "/stats --data " + dir +
                                    "/small.test.tokens --seq-len 32 --samples 3 --r-step 0.25 --out " + dir + "/stats2",
                                dir);
  INFO(by_folder.err);
  REQUIRE(by_folder.code == 0);
  CHECK(json::parse(slurp(dir + "/stats2/locality.json"))["layers"] == l["layers"]);
  CliResult missing = run_cli("analyze locality --checkpoint " + dir + "/nope.safetensors --data x --out " + dir, dir);
  CHECK(missing.code == 2);
}
