#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string_view>

#include "experiments/reports/report_format.h"
#include "experiments/reports/report_writers.h"

namespace tn {

std::string run_name(const RunRecord& run) {
  if (run.seed) return "seed " + std::to_string(*run.seed);
  std::string dir = run.dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return std::filesystem::path(dir).filename().string();
}

bool run_has_problem(const RunRecord& run) {
  if (!run.problems.empty()) return true;
  return run.state == "failed" || run.state == "diverged" || run.state == "incomplete" || run.state == "unreadable" ||
         run.state == "stopped";
}

namespace {
/// A relative path as a Markdown link's destination: spaces, brackets, parentheses, '<', '>' and
/// '%' percent-encoded (a space would end the destination, a ')' close the link).
std::string md_link_target(const std::string& path) {
  static const char* const kHex = "0123456789ABCDEF";
  std::string out;
  for (const char c : path) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= ' ' || std::string_view("()[]<>%").find(c) != std::string_view::npos) {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

constexpr size_t kListedRunDirs = 5;  // more run directories given: the first and last are named

std::string describe_sources(const ReportDocument& doc) {
  std::string out;
  std::vector<std::string> run_dirs;
  for (const ReportSource& s : doc.inputs.sources) {
    if (!s.sweep) {
      run_dirs.push_back(s.dir);
      continue;
    }
    out += "- `" + s.dir + "`: sweep " + s.sweep->name + " (" + std::to_string(s.sweep->points.size()) + " runs" +
           (s.sweep->sweep_file.empty() ? "" : ", from " + s.sweep->sweep_file) + ")\n";
    if (const std::string command = reproduce_command(s); !command.empty())
      out += "  - rerun with `" + command + "`\n";
  }
  if (run_dirs.size() > kListedRunDirs) {
    out += "- " + std::to_string(run_dirs.size()) + " run directories: `" + run_dirs.front() + "` ... `" +
           run_dirs.back() + "`\n";
  } else {
    for (const std::string& d : run_dirs) out += "- `" + d + "`: run directory\n";
  }
  return out;
}

std::string row_line(const std::vector<std::string>& cells) {
  std::string out = "|";
  for (const std::string& c : cells) out += " " + c + " |";
  return out + "\n";
}
bool listed(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

/// The table's header cells: point, state, the key columns, each metric with its n (and paper and
/// baseline columns where a row has them), the speed columns, the analyses, the runs.
std::vector<std::string> table_head(const ReportTable& t) {
  std::vector<std::string> head = {"point", "state"};
  for (size_t k : t.columns) head.push_back(md_cell(t.short_keys[k]));
  for (const std::string& m : t.metrics) {
    head.push_back(m);
    head.push_back("n");
    if (listed(t.paper_metrics, m)) head.push_back(m + " (paper)");
    if (listed(t.baseline_metrics, m)) head.push_back(m + " (baseline)");
  }
  head.insert(head.end(), {"params", "tokens/s", "ranks × threads", "wall (s)"});
  for (const std::string& a : t.analysis) head.push_back(a);
  head.push_back("runs");
  return head;
}

/// Row `r`'s cells, in table_head's order; each metric's best mean in bold.
std::vector<std::string> table_cells(const ReportDocument& doc, size_t r) {
  const ReportTable& t = doc.table;
  const ReportRow& row = t.rows[r];
  std::vector<std::string> cells = {md_cell(row.label), md_cell(row.state)};
  for (size_t k : t.columns) cells.push_back(md_cell(row.values[k]));
  for (const std::string& m : t.metrics) {
    const PooledStat& s = row.metrics.at(m);
    cells.push_back(is_best(doc.highlights, m, r) ? "**" + format_stat(s) + "**" : format_stat(s));
    cells.push_back(std::to_string(s.n));
    if (listed(t.paper_metrics, m)) {
      const auto it = row.paper.find(m);
      cells.push_back(it == row.paper.end() ? "" : format_value(it->second));
    }
    if (listed(t.baseline_metrics, m)) {
      const auto it = row.baseline.find(m);
      cells.push_back(it == row.baseline.end() ? "" : format_value(it->second));
    }
  }
  cells.push_back(row.params.has_mean() ? format_count(row.params.mean) : "");
  cells.push_back(row.tokens_per_s.has_mean()
                      ? format_value(std::round(row.tokens_per_s.mean)) + (row.speed_jobs > 1 ? " †" : "")
                      : "");
  cells.push_back(ranks_by_threads(row));
  cells.push_back(row.wall_s.has_mean() ? format_value(std::round(row.wall_s.mean * 10) / 10) : "");
  for (const std::string& a : t.analysis) {
    const auto it = row.analysis.find(a);
    cells.push_back(it == row.analysis.end() ? "" : format_stat(it->second));
  }
  std::string links;
  for (size_t run_index : row.runs) {
    const RunRecord& run = doc.inputs.runs[run_index];
    if (!links.empty()) links += ' ';
    links.append("[").append(run_name(run)).append("](").append(md_link_target(relative_link(run.dir, doc.out_dir))).append(")");
  }
  cells.push_back(links);
  return cells;
}

/// "## Problems" with a line per run that failed, diverged or has problems; "" when none has.
std::string problems_section(const ReportDocument& doc) {
  std::string problems;
  for (const ReportRow& row : doc.table.rows)
    for (size_t r : row.runs) {
      const RunRecord& run = doc.inputs.runs[r];
      if (!run_has_problem(run)) continue;
      problems += "- **" + md_cell(row.label) + "**, " + run_name(run) + " (" + run.state + "): ";
      if (run.problems.empty()) problems += "no error was recorded";
      for (size_t i = 0; i < run.problems.size(); ++i) {
        if (i) problems += "; ";
        problems += md_cell(run.problems[i]);
      }
      problems += "\n";
    }
  return problems.empty() ? "" : "\n## Problems\n\n" + problems;
}

}  // namespace

std::string report_markdown(const ReportDocument& doc) {
  const ReportTable& t = doc.table;
  std::string title = doc.inputs.sources.size() == 1 && doc.inputs.sources[0].sweep ? doc.inputs.sources[0].sweep->name
                                                                                   : "runs";
  std::string out = "# Report: " + title + "\n\n";
  out += describe_sources(doc) + "\n";
  out += "Each row pools the seeds of one point: mean ± sample standard deviation over its done runs, n = "
         "how many. Runs that are not done (failed, diverged, pending, running, incomplete) are counted in "
         "the state column and do not enter the statistics.";
  out += " " + row_order_text(t);
  out += "\n\n";
  if (const std::string shared = describe_shared(doc.highlights); !shared.empty())
    out += "**Shared by every run:** " + md_cell(shared) + ".\n\n";
  for (const BestValue& b : doc.highlights.best) out += "- " + md_cell(describe_best(t, b)) + "\n";
  if (const std::string unranked = describe_unranked(t, doc.highlights); !unranked.empty())
    out += "- " + md_cell(unranked) + "\n";
  if (!doc.highlights.best.empty() || !doc.highlights.unranked.empty()) out += "\n";

  const std::vector<std::string> head = table_head(t);
  out += row_line(head);
  out += row_line(std::vector<std::string>(head.size(), "---"));
  for (size_t r = 0; r < t.rows.size(); ++r) out += row_line(table_cells(doc, r));

  if (const std::string note = speed_note(t); !note.empty()) out += "\n" + note + "\n";
  if (const std::string note = baseline_note(t); !note.empty()) out += "\n" + note + "\n";
  out += problems_section(doc);
  if (!doc.plots.empty()) {
    out += "\n## Plots\n\n";
    for (const ReportPlot& p : doc.plots) out += "![" + p.title + "](" + md_link_target(p.file) + ")\n\n";
  }
  return out;
}

}  // namespace tn
