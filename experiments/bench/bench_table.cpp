#include "experiments/bench/bench_table.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "core/platform/process/child_process.h"
#include "core/platform/progress.h"
#include "experiments/bench/bench_report.h"
#include "experiments/plots/svg_plot.h"

namespace tn {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Ours at one point: `<self> bench CONFIG --batch B --seq-len n ... --json` in a fresh process.
void measure_ours(const BenchTableRequest& r, const std::string& config, BenchTableRow& row) {
  const std::vector<std::string> argv = {r.self_exe, "bench", config, "--batch", std::to_string(r.batch),
                                         "--seq-len", std::to_string(row.seq_len), "--threads",
                                         std::to_string(r.threads), "--steps", std::to_string(r.steps), "--warmup",
                                         std::to_string(r.warmup), "--probe-size", "0", "--json"};
  const ChildResult child = run_child(argv);
  try {
    if (!WIFEXITED(child.status) || WEXITSTATUS(child.status) != 0) throw std::runtime_error(describe_child_status(child.status));
    const BenchReport report = BenchReport::from_json(nlohmann::json::parse(child.out));
    row.train_tokens_per_s = report.model->result.train_tokens_per_s;
    row.infer_tokens_per_s = report.model->result.infer_tokens_per_s;
    row.peak_mb = child.max_rss_mb;
  } catch (const std::exception& e) {
    row.error = e.what();
    row.train_tokens_per_s = row.infer_tokens_per_s = row.peak_mb = kNaN;
  }
}

/// The reference's train-bench at the same point; its JSON line has tokens_per_s.
void measure_reference(const BenchTableRequest& r, const std::string& config, BenchTableRow& row) {
  std::vector<std::string> argv = r.reference;
  for (const std::string& a : {std::string("train-bench"), std::string("--config"), config, std::string("--batch"),
                               std::to_string(r.batch), std::string("--seq-len"), std::to_string(row.seq_len),
                               std::string("--threads"), std::to_string(r.threads), std::string("--steps"),
                               std::to_string(r.steps), std::string("--warmup"), std::to_string(r.warmup)})
    argv.push_back(a);
  try {
    const ChildResult child = run_child(argv);
    if (!WIFEXITED(child.status) || WEXITSTATUS(child.status) != 0) throw std::runtime_error(describe_child_status(child.status));
    const std::string last = child.out.substr(child.out.rfind('{'));
    row.ref_train_tokens_per_s = nlohmann::json::parse(last).at("tokens_per_s").get<double>();
    row.ref_peak_mb = child.max_rss_mb;
  } catch (const std::exception& e) {
    row.ref_error = e.what();
    row.ref_train_tokens_per_s = row.ref_peak_mb = kNaN;
  }
}

/// Appends (n, y) to the series `label` of `plot`, starting the series when it is new.
void add_point(LinePlot& plot, const std::string& label, int64_t n, double y) {
  auto it = std::find_if(plot.series.begin(), plot.series.end(), [&](const LineSeries& s) { return s.label == label; });
  if (it == plot.series.end()) {
    plot.series.push_back(LineSeries{label, {}, {}, {}, {}, false});
    it = plot.series.end() - 1;
  }
  it->x.push_back(static_cast<double>(n));
  it->y.push_back(y);
}

std::string model_name(const std::string& config) { return std::filesystem::path(config).stem().string(); }

nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

std::string cell(double v, const char* format) { return std::isfinite(v) ? fmt::format(fmt::runtime(format), v) : "–"; }

}  // namespace

std::vector<BenchTableRow> run_bench_table(const BenchTableRequest& r) {
  if (r.configs.empty()) throw ConfigError("bench --table: name at least one model file");
  if (r.seq_lens.empty()) throw ConfigError("bench --table: give the lengths with --seq-lens, e.g. 1024,2048,4096");
  for (const std::string& c : r.configs)
    if (!std::filesystem::exists(c)) throw ConfigError(c + ": no such model file; give a config such as configs/bench/lra_text_t1.yaml");
  std::vector<BenchTableRow> rows;
  Progress progress("bench table", "points", static_cast<int64_t>(r.configs.size() * r.seq_lens.size()));
  for (const std::string& config : r.configs)
    for (int64_t n : r.seq_lens) {
      progress.advance(static_cast<int64_t>(rows.size()));
      BenchTableRow row;
      row.model = model_name(config);
      row.seq_len = n;
      row.ref_train_tokens_per_s = row.ref_peak_mb = kNaN;
      measure_ours(r, config, row);
      if (!r.reference.empty()) measure_reference(r, config, row);
      spdlog::info("{} n={}: ours {:.0f} train tokens/s, {:.0f} infer tokens/s, {:.0f} MB{}{}", row.model, n,
                   row.train_tokens_per_s, row.infer_tokens_per_s, row.peak_mb,
                   r.reference.empty() ? "" : fmt::format("; reference {:.0f} train tokens/s, {:.0f} MB",
                                                          row.ref_train_tokens_per_s, row.ref_peak_mb),
                   row.error.empty() ? "" : " (" + row.error + ")");
      rows.push_back(row);
    }
  return rows;
}

std::string write_bench_table(const BenchTableRequest& r, const std::vector<BenchTableRow>& rows) {
  nlohmann::json j;
  j["request"] = {{"configs", r.configs}, {"seq_lens", r.seq_lens}, {"batch", r.batch}, {"threads", r.threads},
                  {"steps", r.steps}, {"warmup", r.warmup}, {"reference", r.reference}};
  std::string md = fmt::format(
      "| model | n | train tokens/s | infer tokens/s | peak MB | reference train tokens/s | reference peak MB | "
      "speed ratio | memory ratio |\n|---|---|---|---|---|---|---|---|---|\n");
  LinePlot speed{"Training throughput (batch " + std::to_string(r.batch) + ", " + std::to_string(r.threads) +
                     " threads)", "sequence length n (tokens)", "training tokens/s", true, {}};
  LinePlot memory{"Peak memory of a training process", "sequence length n (tokens)", "peak RSS (MB)", true, {}};
  for (const BenchTableRow& row : rows) {
    j["rows"].push_back({{"model", row.model}, {"seq_len", row.seq_len},
                         {"train_tokens_per_s", number(row.train_tokens_per_s)},
                         {"infer_tokens_per_s", number(row.infer_tokens_per_s)}, {"peak_mb", number(row.peak_mb)},
                         {"ref_train_tokens_per_s", number(row.ref_train_tokens_per_s)},
                         {"ref_peak_mb", number(row.ref_peak_mb)}, {"error", row.error}, {"ref_error", row.ref_error}});
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", row.model, row.seq_len,
                      cell(row.train_tokens_per_s, "{:.0f}"), cell(row.infer_tokens_per_s, "{:.0f}"),
                      cell(row.peak_mb, "{:.0f}"), cell(row.ref_train_tokens_per_s, "{:.0f}"),
                      cell(row.ref_peak_mb, "{:.0f}"), cell(row.train_tokens_per_s / row.ref_train_tokens_per_s, "{:.2f}×"),
                      cell(row.peak_mb / row.ref_peak_mb, "{:.2f}×"));
    add_point(speed, row.model, row.seq_len, row.train_tokens_per_s);
    add_point(memory, row.model, row.seq_len, row.peak_mb);
    if (!r.reference.empty()) {
      add_point(speed, row.model + " (reference)", row.seq_len, row.ref_train_tokens_per_s);
      add_point(memory, row.model + " (reference)", row.seq_len, row.ref_peak_mb);
    }
  }
  const std::filesystem::path dir(r.out_dir);
  std::filesystem::create_directories(dir / "plots");
  write_file_atomic((dir / "bench_table.json").string(), j.dump(2) + "\n");
  write_file_atomic((dir / "bench_table.md").string(), md);
  write_file_atomic((dir / "plots" / "bench_train_tokens_per_s.svg").string(), render_line_plot(speed));
  write_file_atomic((dir / "plots" / "bench_peak_memory.svg").string(), render_line_plot(memory));
  return md;
}

}  // namespace tn
