#pragma once
// Run directories and sweep folders made up by hand for the `report` tests: config.yaml,
// summary.json and metrics.jsonl with values chosen so the pooled statistics are known exactly.
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "experiments/outputs/metrics.h"
#include "experiments/outputs/run_summary.h"

namespace tn::test {

struct FakeRun {
  std::string yaml_model = "{d_model: 32, token_mixer: linear}";
  uint64_t seed = 1;
  int threads = 2;
  std::optional<double> valid_ppl;  // nullopt: no summary.json (a failed or unfinished run)
  double test_ppl = 30;
  std::string paper;                // e.g. "{test.ppl: 31.01}"; "" for none
  int steps = 20;                   // training-log lines (one per step) and an eval every 5
  std::optional<double> rsd_mean;   // analysis.grad_stats.rsd_mean, with two layers
};

inline void write_fake_file(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

/// Writes `run` into `dir`: config.yaml, metrics.jsonl, and summary.json when it has valid_ppl.
inline void write_fake_run(const std::filesystem::path& dir, const FakeRun& run) {
  std::string yaml = "task: language_modeling\nmodel: " + run.yaml_model +
                     "\ndata: {reader: wikitext, seq_len: 16}\ntrain: {batch_size: 2, max_steps: " +
                     std::to_string(run.steps) + ", seed: " + std::to_string(run.seed) +
                     ", threads: " + std::to_string(run.threads) + "}\n";
  if (!run.paper.empty()) yaml += "paper: " + run.paper + "\n";
  write_fake_file(dir / "config.yaml", yaml);
  const double final_ppl = run.valid_ppl.value_or(50);
  std::string lines;
  for (int step = 1; step <= run.steps; ++step) {
    const TrainRecord t{step, 0.01 * step, 8.0 - 0.1 * step + 0.01 * static_cast<double>(run.seed), 1e-3, 1.0, 1000.0, 0.1 * step, {}};
    lines += t.to_json().dump() + "\n";
    if (step % 5 == 0) {
      Metrics m;
      m.set("loss", std::log(final_ppl) + 0.1 * (run.steps - step));
      m.set("ppl", final_ppl * (1 + 0.2 * (run.steps - step)));
      m.set_count("tokens", 1000);
      lines += EvalRecord{step, "valid", m}.to_json().dump() + "\n";
    }
  }
  write_fake_file(dir / "metrics.jsonl", lines);
  if (!run.valid_ppl) return;
  RunSummary s;
  s.final["valid"].set("loss", std::log(*run.valid_ppl));
  s.final["valid"].set("ppl", *run.valid_ppl);
  s.final["valid"].set_count("tokens", 1000);
  s.final["test"].set("loss", std::log(run.test_ppl));
  s.final["test"].set("ppl", run.test_ppl);
  s.final["test"].set_count("tokens", 2000);
  s.train = {run.steps, 0.2, 640, 5000.0, 0.128, 0.5, 3200, 6400.0, 2.0, run.threads, run.seed};
  s.params = 12345;
  s.vocab_size = 100;
  s.peak_rss_mb = 50;
  s.data = {{"train", "a.tokens"}};
  s.baselines = {{"unigram_valid_ppl", 90.0}};
  if (run.rsd_mean)
    s.analysis = {{"grad_stats",
                   {{"definition", "made up"},
                    {"layers", {{{"layer", 0}, {"mixer", "diag"}, {"mean", 1.0}, {"std", 0.2}, {"rsd", 0.2}, {"n", 4}},
                                {{"layer", 1}, {"mixer", "norm_attention"}, {"mean", 1.0}, {"std", 0.4}, {"rsd", *run.rsd_mean}, {"n", 4}}}},
                    {"rsd_mean", *run.rsd_mean}}}};
  write_fake_file(dir / "summary.json", s.to_json().dump(2));
}

struct FakePoint {
  std::string dir;
  std::string normalize;  // the swept value of model.attention.linear.normalize
  uint64_t seed = 1;
  std::string state = "done";
  std::string error;
  nlohmann::json extra = nlohmann::json::object();  // more overrides (e.g. paper values, as sweep files set them)
};

/// Writes sweep.json for `points` (their run directories are written separately).
inline void write_fake_sweep(const std::filesystem::path& folder, const std::vector<FakePoint>& points) {
  nlohmann::json list = nlohmann::json::array();
  for (const FakePoint& p : points) {
    nlohmann::json overrides = {{"model.attention.linear.normalize", p.normalize}, {"train.seed", p.seed}};
    overrides.update(p.extra);
    list.push_back({{"name", "normalize=" + p.normalize + " seed=" + std::to_string(p.seed)},
                    {"dir", p.dir},
                    {"overrides", overrides},
                    {"command", "transnormer train configs/quickstart.yaml --out " + p.dir + " --threads 1 --data-root /srv/datasets"},
                    {"state", p.state},
                    {"exit_code", p.state == "done" ? nlohmann::json(0) : p.state == "failed" ? nlohmann::json(1) : nlohmann::json()},
                    {"wall_s", p.state == "done" ? nlohmann::json(3.0) : nlohmann::json()},
                    {"jobs", 2},
                    {"threads", 1},
                    {"error", p.error}});
  }
  const nlohmann::json sweep = {{"name", "scaling_vs_norm"},
                                {"sweep_file", "configs/ablations/scaling_vs_norm.yaml"},
                                {"base", "configs/quickstart.yaml"},
                                {"set", {{"model.token_mixer", "linear"}}},
                                {"axes", {"model.attention.linear.normalize", "train.seed"}},
                                {"points", list}};
  write_fake_file(folder / "sweep.json", sweep.dump(2));
}

/// One finished point of a made-up sweep index (sweep.json's "points" entries).
inline nlohmann::json fake_done_point(const std::string& name, const std::string& dir, const nlohmann::json& overrides) {
  return {{"name", name},
          {"dir", dir},
          {"overrides", overrides},
          {"command", "transnormer train x.yaml --out " + dir},
          {"state", "done"},
          {"exit_code", 0},
          {"wall_s", 3.0},
          {"error", ""}};
}

/// Writes a sweep index named `name` without a base, swept over `axes`, with these points.
inline void write_fake_index(const std::filesystem::path& folder, const std::string& name,
                             const std::vector<std::string>& axes, const nlohmann::json& points) {
  write_fake_file(folder / "sweep.json", nlohmann::json{{"name", name}, {"sweep_file", "s.yaml"}, {"base", ""},
                                                        {"set", nlohmann::json::object()}, {"axes", axes},
                                                        {"points", points}}.dump());
}

/// The standard made-up sweep: normalize=scaling with seeds 1..3 at valid.ppl 10, 12, 14
/// (mean 12, std 2; test.ppl 30, paper 31.01 in config.yaml and as an override, as sweep files
/// set it), normalize=srmsnorm with seed 1 done at 20 and
/// seeds 2 and 3 failed without summary.json (seed 3 without a directory, its paper test.ppl 40
/// only in its overrides).
inline void write_standard_sweep(const std::filesystem::path& folder) {
  std::vector<FakePoint> points;
  const double ppl[3] = {10, 12, 14};
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    FakePoint p{"normalize-scaling_seed-" + std::to_string(seed), "scaling", seed, "done", "", {{"paper.test.ppl", 31.01}}};
    FakeRun r;
    r.yaml_model = "{d_model: 32, token_mixer: linear, attention: {linear: {normalize: scaling}}}";
    r.seed = seed;
    r.valid_ppl = ppl[seed - 1];
    r.paper = "{test.ppl: 31.01}";
    r.rsd_mean = 0.1 * static_cast<double>(seed);
    write_fake_run(folder / p.dir, r);
    points.push_back(p);
  }
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    FakePoint p{"normalize-srmsnorm_seed-" + std::to_string(seed), "srmsnorm", seed, "done", "", nlohmann::json::object()};
    if (seed == 3) p.extra = {{"paper.test.ppl", 40.0}};  // known from the sweep only: seed 3 has no directory
    FakeRun r;
    r.yaml_model = "{d_model: 32, token_mixer: linear, attention: {linear: {normalize: srmsnorm}}}";
    r.seed = seed;
    if (seed == 1) {
      r.valid_ppl = 20;
      write_fake_run(folder / p.dir, r);
    } else {
      p.state = "failed";
      p.error = "exit code 1: out of memory (made up)";
      if (seed == 2) write_fake_run(folder / p.dir, r);  // config and metrics, no summary
    }
    points.push_back(p);
  }
  write_fake_sweep(folder, points);
}

}  // namespace tn::test
