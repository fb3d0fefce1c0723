#include <nlohmann/json.hpp>

#include <cmath>

#include "core/platform/io/json_errors.h"
#include "experiments/reports/report_format.h"
#include "experiments/reports/report_writers.h"

namespace tn {

namespace {
using nlohmann::ordered_json;

ordered_json number(double v) { return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr); }

ordered_json stat(const PooledStat& s) {
  ordered_json j = ordered_json::object();
  j["mean"] = s.has_mean() ? number(s.mean) : ordered_json(nullptr);
  j["std"] = s.has_std() ? number(s.std) : ordered_json(nullptr);
  j["n"] = s.n;
  return j;
}

ordered_json run_json(const RunRecord& run, const std::string& out_dir) {
  ordered_json j = ordered_json::object();
  j["dir"] = relative_link(run.dir, out_dir);
  if (!run.point.empty()) j["point"] = run.point;
  j["seed"] = run.seed ? ordered_json(*run.seed) : ordered_json(nullptr);
  j["state"] = run.state;
  j["in_stats"] = run.done();
  j["problems"] = run.problems;
  ordered_json final = ordered_json::object();
  if (run.summary)
    for (const auto& [split, metrics] : run.summary->final) {
      ordered_json values = ordered_json::object();
      for (const std::string& name : metrics.names()) values[name] = number(metrics.at(name));
      final[split] = values;
    }
  j["final"] = final;
  if (run.summary) {
    j["params"] = run.summary->params;
    j["tokens_per_s"] = number(run.summary->train.tokens_per_s);
    j["total_s"] = number(run.summary->train.total_s);
  }
  if (run.sweep_wall_s) j["wall_s"] = number(*run.sweep_wall_s);
  ordered_json analysis = ordered_json::object();
  for (const auto& [name, value] : run.analysis) analysis[name] = number(value);
  if (!analysis.empty()) j["analysis"] = analysis;
  return j;
}
}  // namespace

std::string report_json(const ReportDocument& doc) {
  const ReportTable& t = doc.table;
  ordered_json out = ordered_json::object();
  ordered_json sources = ordered_json::array();
  for (const ReportSource& s : doc.inputs.sources) {
    ordered_json j = {{"dir", s.dir}, {"kind", s.sweep ? "sweep" : "run"}};
    if (s.sweep) j["sweep"] = s.sweep->name;
    sources.push_back(j);
  }
  out["inputs"] = sources;
  out["keys"] = t.keys;
  out["metrics"] = t.metrics;
  out["available_metrics"] = t.available;
  out["by"] = t.by.empty() ? ordered_json(nullptr) : ordered_json(t.by);
  ordered_json shared = ordered_json::object();
  for (const auto& [key, value] : doc.highlights.shared) shared[key] = value;
  out["shared"] = shared;
  ordered_json best = ordered_json::array();
  for (const BestValue& b : doc.highlights.best) {
    ordered_json behind = ordered_json::array();
    for (size_t r : b.clearly_worse) behind.push_back(t.rows[r].label);
    best.push_back({{"metric", b.metric}, {"lower_is_better", b.lower_is_better}, {"group", b.group},
                    {"row", t.rows[b.row].label}, {"clearly_worse", behind}});
  }
  out["best"] = best;
  ordered_json rows = ordered_json::array();
  for (const ReportRow& row : t.rows) {
    ordered_json r = ordered_json::object();
    r["label"] = row.label;
    ordered_json values = ordered_json::object();
    for (size_t i = 0; i < t.keys.size(); ++i) values[t.keys[i]] = row.values[i];
    r["keys"] = values;
    r["state"] = row.state;
    r["runs_total"] = row.runs.size();
    r["runs_done"] = row.done;
    ordered_json metrics = ordered_json::object();
    for (const std::string& m : t.metrics) {
      ordered_json s = stat(row.metrics.at(m));
      const auto it = row.paper.find(m);
      s["paper"] = it == row.paper.end() ? ordered_json(nullptr) : number(it->second);
      const auto b = row.baseline.find(m);
      s["baseline"] = b == row.baseline.end() ? ordered_json(nullptr) : number(b->second);
      metrics[m] = s;
    }
    r["metrics"] = metrics;
    r["params"] = stat(row.params);
    r["tokens_per_s"] = stat(row.tokens_per_s);
    r["wall_s"] = stat(row.wall_s);
    r["speed_jobs"] = row.speed_jobs > 0 ? ordered_json(row.speed_jobs) : ordered_json(nullptr);
    r["ranks"] = row.ranks > 0 ? ordered_json(row.ranks) : ordered_json(nullptr);
    r["threads"] = row.threads > 0 ? ordered_json(row.threads) : ordered_json(nullptr);
    ordered_json analysis = ordered_json::object();
    for (const auto& [name, s] : row.analysis) analysis[name] = stat(s);
    r["analysis"] = analysis;
    ordered_json runs = ordered_json::array();
    for (size_t i : row.runs) runs.push_back(run_json(doc.inputs.runs[i], doc.out_dir));
    r["runs"] = runs;
    rows.push_back(r);
  }
  out["rows"] = rows;
  ordered_json plots = ordered_json::array();
  for (const ReportPlot& p : doc.plots) plots.push_back(p.file);
  out["plots"] = plots;
  return dump_json_text(out, 2) + "\n";
}

}  // namespace tn
