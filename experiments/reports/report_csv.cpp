#include <algorithm>

#include "experiments/reports/report_format.h"
#include "experiments/reports/report_writers.h"

namespace tn {

namespace {
std::string line(const std::vector<std::string>& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) out += ',';
    out += csv_field(fields[i]);
  }
  return out + "\n";
}

void add_stat(std::vector<std::string>& cells, const PooledStat& s) {
  cells.push_back(s.has_mean() ? exact_number(s.mean) : "");
  cells.push_back(s.has_std() ? exact_number(s.std) : "");
  cells.push_back(std::to_string(s.n));
}
}  // namespace

std::string report_csv(const ReportDocument& doc) {
  const ReportTable& t = doc.table;
  auto has_paper = [&](const std::string& m) {
    return std::find(t.paper_metrics.begin(), t.paper_metrics.end(), m) != t.paper_metrics.end();
  };
  auto has_baseline = [&](const std::string& m) {
    return std::find(t.baseline_metrics.begin(), t.baseline_metrics.end(), m) != t.baseline_metrics.end();
  };
  std::vector<std::string> head = {"point", "state", "runs", "done"};
  for (size_t k : t.columns) head.push_back(t.keys[k]);
  for (const std::string& m : t.metrics) {
    head.insert(head.end(), {m + ".mean", m + ".std", m + ".n"});
    if (has_paper(m)) head.push_back(m + ".paper");
    if (has_baseline(m)) head.push_back(m + ".baseline");
  }
  head.insert(head.end(), {"params", "tokens_per_s", "wall_s", "speed_jobs", "ranks", "threads"});
  for (const std::string& a : t.analysis) head.insert(head.end(), {a + ".mean", a + ".std", a + ".n"});
  head.insert(head.end(), {"run_dirs", "problems"});
  std::string out = line(head);
  for (const ReportRow& row : t.rows) {
    std::vector<std::string> cells = {row.label, row.state, std::to_string(row.runs.size()), std::to_string(row.done)};
    for (size_t k : t.columns) cells.push_back(row.values[k]);
    for (const std::string& m : t.metrics) {
      add_stat(cells, row.metrics.at(m));
      if (has_paper(m)) {
        const auto it = row.paper.find(m);
        cells.push_back(it == row.paper.end() ? "" : exact_number(it->second));
      }
      if (has_baseline(m)) {
        const auto it = row.baseline.find(m);
        cells.push_back(it == row.baseline.end() ? "" : exact_number(it->second));
      }
    }
    cells.push_back(row.params.has_mean() ? exact_number(row.params.mean) : "");
    cells.push_back(row.tokens_per_s.has_mean() ? exact_number(row.tokens_per_s.mean) : "");
    cells.push_back(row.wall_s.has_mean() ? exact_number(row.wall_s.mean) : "");
    cells.push_back(row.speed_jobs > 0 ? std::to_string(row.speed_jobs) : "");
    cells.push_back(row.ranks > 0 ? std::to_string(row.ranks) : "");
    cells.push_back(row.threads > 0 ? std::to_string(row.threads) : "");
    for (const std::string& a : t.analysis) {
      const auto it = row.analysis.find(a);
      add_stat(cells, it == row.analysis.end() ? PooledStat{} : it->second);
    }
    std::string dirs, problems;
    for (size_t r : row.runs) {
      const RunRecord& run = doc.inputs.runs[r];
      if (!dirs.empty()) dirs += ';';
      dirs += relative_link(run.dir, doc.out_dir);
      for (const std::string& p : run.problems) {
        if (!problems.empty()) problems += "; ";
        problems += run_name(run) + ": " + p;
      }
    }
    cells.push_back(dirs);
    cells.push_back(problems);
    out += line(cells);
  }
  return out;
}

}  // namespace tn
