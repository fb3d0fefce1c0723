// train.checkpoint.best_metric and train.patience through the CLI, on a run whose validation
// perplexity peaks early (a learning rate of 0.1 on the tiny model): the best checkpoint is the
// evaluation with the lowest valid.ppl in metrics.jsonl, patience stops the run where that file
// shows `patience` validations in a row without improvement, `eval --best` reproduces the best
// value, and a resume keeps the best so far and the patience count.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <sstream>

#include "tests/app/cli_runner.h"
#include "tests/app/tiny_spec.h"

using namespace tn::test;
using nlohmann::json;

namespace {

struct Eval {
  int64_t step;
  double ppl;
};

std::vector<Eval> valid_evals(const std::string& metrics) {
  std::vector<Eval> out;
  std::istringstream in(metrics);
  for (std::string line; std::getline(in, line);) {
    const json r = json::parse(line);
    if (r.value("split", "") == "valid") out.push_back({r["step"].get<int64_t>(), r["ppl"].get<double>()});
  }
  return out;
}

const char* kPeaksEarly =
    " --threads 1 --set train.max_steps=60 --set train.eval_every=5 --set train.optimizer.lr=0.1"
    " --set 'train.checkpoint={best_metric: valid.ppl}'";

}  // namespace

TEST_CASE("cli: the best checkpoint and early stopping follow the validation metric, and survive a resume") {
  const std::string dir = scratch_dir("best_checkpoint");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  const std::string spec = "train " + dir + "/tiny.yaml" + kPeaksEarly;

  // Without patience: the whole run; the best is the lowest valid.ppl of metrics.jsonl.
  const CliResult full = run_cli(spec + " --out " + dir + "/full", dir);
  INFO(full.err);
  REQUIRE(full.code == 0);
  const std::vector<Eval> evals = valid_evals(slurp(dir + "/full/metrics.jsonl"));
  REQUIRE(evals.size() == 12);
  Eval best = evals[0];
  for (const Eval& e : evals)
    if (e.ppl < best.ppl) best = e;
  const json summary = json::parse(slurp(dir + "/full/summary.json"));
  CHECK(summary["best"]["metric"] == "valid.ppl");
  CHECK(summary["best"]["mode"] == "min");
  CHECK(summary["best"]["step"] == best.step);
  CHECK(summary["best"]["value"].get<double>() == best.ppl);
  CHECK_FALSE(summary.contains("stopped_early_at"));
  REQUIRE(std::filesystem::exists(dir + "/full/checkpoint_best.safetensors"));
  // The peak is early: the point of the test (and of early stopping).
  REQUIRE(best.step < 50);

  // eval --best gives the best validation again, exactly (same weights, same data).
  const CliResult again = run_cli("eval " + dir + "/full --best --split valid", dir);
  INFO(again.err);
  REQUIRE(again.code == 0);
  CHECK(json::parse(again.out)["ppl"].get<double>() == doctest::Approx(best.ppl).epsilon(1e-12));

  // Patience 3: the run stops at the third validation in a row without a lower valid.ppl.
  int64_t expected_stop = 0, since = 0;
  double lowest = evals[0].ppl;
  for (size_t i = 1; i < evals.size() && !expected_stop; ++i) {
    if (evals[i].ppl < lowest) {
      lowest = evals[i].ppl;
      since = 0;
    } else if (++since == 3) {
      expected_stop = evals[i].step;
    }
  }
  REQUIRE(expected_stop > 0);
  const CliResult patient = run_cli(spec + " --set train.patience=3 --out " + dir + "/patient", dir);
  INFO(patient.err);
  REQUIRE(patient.code == 0);
  CHECK(patient.err.find("early stopping at step " + std::to_string(expected_stop)) != std::string::npos);
  const json stopped = json::parse(slurp(dir + "/patient/summary.json"));
  CHECK(stopped["stopped_early_at"] == expected_stop);
  CHECK(stopped["train"]["steps"] == expected_stop);
  Eval best_before_stop = evals[0];  // the best of the validations up to the stop
  for (const Eval& e : evals)
    if (e.step <= expected_stop && e.ppl < best_before_stop.ppl) best_before_stop = e;
  CHECK(stopped["best"]["step"] == best_before_stop.step);
  CHECK(stopped["best"]["value"].get<double>() == best_before_stop.ppl);
  CHECK(stopped.contains("test"));  // the final evaluations ran at the stop
  CHECK(valid_evals(slurp(dir + "/patient/metrics.jsonl")).back().step == expected_stop);

  // Stopped short of the stop, then resumed with more steps: the same stop and best (the best
  // value and the count of validations without improvement come back with the train state).
  const int64_t before = expected_stop - 5;
  REQUIRE(run_cli(spec + " --set train.patience=3 --set train.max_steps=" + std::to_string(before) + " --out " + dir +
                      "/parts",
                  dir)
              .code == 0);
  const CliResult resumed = run_cli("train --resume " + dir + "/parts --set train.max_steps=60", dir);
  INFO(resumed.err);
  REQUIRE(resumed.code == 0);
  const json parts = json::parse(slurp(dir + "/parts/summary.json"));
  CHECK(parts["stopped_early_at"] == expected_stop);
  CHECK(parts["best"] == stopped["best"]);
  CHECK(parts["test"]["loss"].get<double>() == stopped["test"]["loss"].get<double>());
}

TEST_CASE("cli: patience without a metric, and a metric the task lacks, are refused with the key") {
  const std::string dir = scratch_dir("best_checkpoint_bad");
  write_text(dir + "/tiny.yaml", tiny_spec(dir, "  patience: 2\n"));
  const CliResult no_metric = run_cli("train " + dir + "/tiny.yaml --out " + dir + "/a", dir);
  CHECK(no_metric.code == 2);
  CHECK(no_metric.err.find("tiny.yaml:") != std::string::npos);
  CHECK(no_metric.err.find("train.patience") != std::string::npos);
  CHECK(no_metric.err.find("best_metric") != std::string::npos);

  write_text(dir + "/tiny2.yaml", tiny_spec(dir, "  checkpoint: {best_metric: valid.accuracy}\n"));
  const CliResult missing = run_cli("train " + dir + "/tiny2.yaml --threads 1 --out " + dir + "/b", dir);
  CHECK(missing.code == 2);
  CHECK(missing.err.find("valid.accuracy is not a metric") != std::string::npos);
  CHECK(missing.err.find("valid.ppl") != std::string::npos);
  const CliResult test_metric = run_cli("train " + dir + "/tiny.yaml --set train.patience=0 "
                                        "--set 'train.checkpoint={best_metric: test.ppl}' --out " + dir + "/c",
                                        dir);
  CHECK(test_metric.code == 2);
  CHECK(test_metric.err.find("use valid.<metric>") != std::string::npos);
  CHECK(run_cli("eval " + dir + "/b --best", dir).code == 2);  // no run there to evaluate
}

TEST_CASE("cli: a best_metric the validation cannot give is refused before training, a validation without a split warned") {
  const std::string dir = scratch_dir("best_checkpoint_refused");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  const std::string spec = "train " + dir + "/tiny.yaml --threads 1 --set train.max_steps=4";
  // A language model's validation has loss, ppl and tokens: valid.accuracy is refused by --dry-run
  // and by the run, before anything is written.
  for (const char* dry : {" --dry-run", ""}) {
    const CliResult r = run_cli(spec + " --set 'train.checkpoint={best_metric: valid.accuracy}'" + dry + " --out " + dir + "/acc", dir);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("tiny.yaml: train.checkpoint.best_metric: valid.accuracy is not a metric of this task's "
                     "validation; it has valid.loss, valid.ppl, valid.tokens") != std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(dir + "/acc/metrics.jsonl"));
  // No validation split: best_metric refused, eval_every warned (dry run and run).
  const std::string no_valid = spec + " --set data.split_valid_from_train=0";
  const CliResult best = run_cli(no_valid + " --set 'train.checkpoint={best_metric: valid.ppl}' --out " + dir + "/nv", dir);
  CHECK(best.code == 2);
  CHECK(best.err.find("valid.ppl needs a validation split, and the data gives none") != std::string::npos);
  const CliResult dry = run_cli(no_valid + " --set train.eval_every=2 --dry-run --out " + dir + "/nv", dir);
  INFO(dry.err);
  CHECK(dry.code == 0);
  CHECK(dry.out.find("# warning: train.eval_every=2: the data has no validation split") != std::string::npos);
  CHECK(dry.out.find("# data valid:") == std::string::npos);
  const CliResult run = run_cli(no_valid + " --set train.eval_every=2 --out " + dir + "/nv", dir);
  CHECK(run.code == 0);
  CHECK(run.err.find("train.eval_every=2: the data has no validation split") != std::string::npos);
  // eval's hint names the split the run has.
  const CliResult valid = run_cli("eval " + dir + "/nv --split valid", dir);
  CHECK(valid.code == 2);
  CHECK(valid.err.find("no labelled valid split; evaluate the test split: --split test") != std::string::npos);
}
