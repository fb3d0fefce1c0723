// Typed run outputs: each type's from_json reads what its to_json writes, counts stay integers,
// and malformed input names what is wrong.
#include <doctest/doctest.h>

#include <cmath>

#include "experiments/bench/bench_report.h"
#include "experiments/outputs/metrics.h"
#include "experiments/outputs/run_summary.h"

using namespace tn;
using nlohmann::json;

TEST_CASE("metrics: order kept, counts are integers, from_json reads to_json") {
  Metrics m;
  m.set("loss", 5.5);
  m.set("ppl", std::exp(5.5));
  m.set_count("tokens", 245569);
  m.set("loss", 5.25);  // replaced in place
  CHECK(m.names() == std::vector<std::string>{"loss", "ppl", "tokens"});
  CHECK(m.at("loss") == 5.25);
  CHECK_FALSE(m.find("accuracy"));
  CHECK_THROWS_AS(m.at("accuracy"), std::out_of_range);
  const json j = m.to_json();
  CHECK(j["tokens"].is_number_integer());
  CHECK(j["loss"].is_number_float());
  const Metrics back = Metrics::from_json(j);
  CHECK(back.at("tokens") == 245569);
  CHECK(back.to_json() == j);
  CHECK_THROWS_AS(Metrics::from_json(json{{"loss", "high"}}), std::invalid_argument);
}

TEST_CASE("metrics records: evaluation and training lines round trip and are told apart") {
  Metrics m;
  m.set("accuracy", 0.75);
  const EvalRecord e{15, "valid", m};
  const json ej = e.to_json();
  CHECK(ej == json{{"step", 15}, {"split", "valid"}, {"accuracy", 0.75}});
  CHECK(EvalRecord::from_json(ej) == e);
  const TrainRecord t{10, 0.5, 6.25, 1e-3, 0.75, 12000.0, 3.5};
  CHECK(TrainRecord::from_json(t.to_json()) == t);
  auto [train_line, eval_line] = parse_metrics_line(ej);
  CHECK_FALSE(train_line);
  REQUIRE(eval_line);
  CHECK(*eval_line == e);
  std::tie(train_line, eval_line) = parse_metrics_line(t.to_json());
  REQUIRE(train_line);
  CHECK(*train_line == t);
  CHECK_THROWS_AS(EvalRecord::from_json(json{{"split", "valid"}}), std::invalid_argument);
  CHECK_THROWS_AS(TrainRecord::from_json(json{{"step", 3}}), std::invalid_argument);
}

TEST_CASE("run summary: every field round trips, baselines may be null, splits are metrics") {
  RunSummary s;
  s.final["valid"].set("loss", 5.6);
  s.final["test"].set("loss", 5.5);
  s.final["test"].set_count("tokens", 100);
  s.train = {450, 4.7, 918517, 11394.5, 80.6, 18.7, 2000000, 106951.9, 101.0, 2, 1};
  s.params = 3029736;
  s.vocab_size = 17488;
  s.peak_rss_mb = 590.0;
  s.data = {{"train", "a.tokens"}, {"valid", ""}, {"test", "b.tokens"}};
  s.baselines = {{"unigram_valid_ppl", std::nullopt}, {"unigram_test_ppl", 714.95}};
  s.evals.push_back({450, "test", s.final["test"]});
  const json j = s.to_json();
  CHECK(j["unigram_valid_ppl"].is_null());
  CHECK(j["train"]["steps"] == 450);
  CHECK(j["train"]["eval_tokens"] == 2000000);
  json older = j;  // a summary written before evaluation throughput was recorded
  older["train"].erase("eval_tokens");
  older["train"].erase("eval_tokens_per_s");
  CHECK(RunSummary::from_json(older).train.eval_tokens == 0);
  CHECK(j["test"]["tokens"] == 100);
  CHECK(RunSummary::from_json(j) == s);
  json broken = j;
  broken.erase("params");
  CHECK_THROWS_WITH_AS(RunSummary::from_json(broken), "summary: missing \"params\"", std::invalid_argument);
}

TEST_CASE("bench report: to_json keys, derived MFU, and from_json of to_json") {
  BenchReport r;
  BenchReport::ModelRun m;
  m.batch = 8;
  m.seq_len = 256;
  m.vocab_size = 1000;
  m.precision = Precision::BF16;
  m.result.params = 42;
  m.result.train_tokens_per_s = 2048;
  m.result.train_step_s = 1.0;
  m.result.train_step_median_s = 0.9;
  m.result.train_step_times = {1.1, 0.9, 1.0};
  m.result.matmul_only_s = 0.8;
  m.result.matmul_replay_times = {0.9, 0.8, 0.85};
  m.result.matmul_only_median_s = 0.85;
  m.result.matmul_calls = 12;
  m.result.train_gflops = 50;
  m.result.infer_tokens_per_s = 6000;
  m.result.infer_gflops = 40;
  m.result.flops.projections = 1e9;
  m.result.flops.head = 2e9;
  r.model = m;
  r.peak_rss_mb = 300;
  r.threads = 2;
  PeakMatmul peak;
  peak.f32 = {true, "", "brg:avx2", 2048, 2048, 2048, 5, 0.2, 0.21, 100.0, 95.0};
  peak.bf16.error = "no bf16 kernel";
  r.peak = peak;
  const json j = r.to_json();
  CHECK(j["precision"] == "bf16");
  CHECK(j["train"]["mfu"].get<double>() == doctest::Approx(0.5));
  CHECK(j["train"]["mfu_bf16"].is_null());
  // A bf16 peak below f32's (no native bf16 matmul) bounds nothing: no mfu_bf16 over 100 %.
  BenchReport slow = r;
  slow.peak->bf16 = {true, "", "ref", 2048, 2048, 2048, 5, 0.4, 0.42, 50.0, 48.0};
  CHECK(slow.to_json()["train"]["mfu_bf16"].is_null());
  BenchReport fast = r;
  fast.peak->bf16 = {true, "", "brg:avx512_core_bf16", 2048, 2048, 2048, 5, 0.1, 0.11, 200.0, 190.0};
  CHECK(fast.to_json()["train"]["mfu_bf16"].get<double>() == doctest::Approx(0.25));
  CHECK(j["train"]["step_over_matmul"].get<double>() == doctest::Approx(1.25));  // mean 1.0 / best 0.8
  CHECK(j["train"]["step_over_matmul_median"].get<double>() == doctest::Approx(0.9 / 0.85));  // median / median
  CHECK(j["model_gflop_per_step"].get<double>() == doctest::Approx(9.0));
  CHECK(j["peak_gflops"]["bf16"].is_null());
  CHECK_FALSE(j.contains("scaling"));
  const BenchReport back = BenchReport::from_json(j);
  CHECK(back.to_json() == j);
  json before = j;  // a report written before the median replay existed reads as best = median
  before["train"].erase("matmul_only_median_s");
  before["train"].erase("matmul_replay_times_s");
  CHECK(BenchReport::from_json(before).model->result.matmul_only_median_s == doctest::Approx(0.8));
  CHECK(back.to_text() == r.to_text());
  CHECK(r.to_text().find("precision bf16") != std::string::npos);
  CHECK(r.to_text().find("peak matmul bf16: not measured (no bf16 kernel)") != std::string::npos);
}
