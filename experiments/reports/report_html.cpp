#include <algorithm>
#include <cmath>
#include <regex>

#include "core/platform/system.h"
#include "experiments/reports/report_format.h"
#include "experiments/reports/report_writers.h"

namespace tn {

namespace {
constexpr const char* kStyle = R"(
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2em auto; max-width: 1400px;
       padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ddd; }
p.note, ul.inputs { color: #555; font-size: 0.9em; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ddd; padding: 0.3em 0.6em; text-align: right; white-space: nowrap; }
th { background: #f4f4f4; position: sticky; top: 0; }
td.text, th.text { text-align: left; }
td.paper { color: #666; font-style: italic; }
td.best { font-weight: bold; background: #eef7ee; }
tr.notdone td { background: #fff4f4; }
td.state-done { color: #1a7f37; } td.state-other { color: #b42318; }
ul.problems li { font-size: 0.9em; margin: 0.2em 0; }
div.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); gap: 0 2em; }
figure { margin: 1.5em 0; } figcaption { font-size: 0.9em; color: #555; }
figure svg { max-width: 100%; height: auto; display: block; }
a { color: #0b5cad; text-decoration: none; } a:hover { text-decoration: underline; }
)";

std::string replace_all(const std::string& text, const std::string& from, const std::string& to) {
  std::string out;
  size_t start = 0;
  for (size_t at; (at = text.find(from, start)) != std::string::npos; start = at + from.size())
    out.append(text, start, at - start).append(to);
  return out.append(text, start, std::string::npos);
}

/// The SVG document as an inline element: no XML prolog or doctype, ids made unique to this plot
/// (PLplot names its clip paths the same in every file), its size in pixels rather than points so
/// that every plot shows its text at the same size (CSS shrinks it to the page when narrower).
std::string inline_svg(const std::string& svg, size_t index) {
  std::string s = svg.substr(std::min(svg.size(), svg.find("<svg")));
  const std::string prefix = "plot" + std::to_string(index) + "-";
  s = replace_all(s, "id=\"", "id=\"" + prefix);
  s = replace_all(s, "url(#", "url(#" + prefix);
  const size_t end = s.find('>');
  if (end == std::string::npos) return s;
  std::string head = s.substr(0, end);
  head = std::regex_replace(head, std::regex("(width|height)=\"([0-9.]+)pt\""), "$1=\"$2\"");
  return head + s.substr(end);
}

std::string cell(const std::string& text, const std::string& cls = "") {
  return "<td" + (cls.empty() ? "" : " class=\"" + cls + "\"") + ">" + html_escape(text) + "</td>";
}

std::string link(const std::string& href, const std::string& text) {
  return "<a href=\"" + html_escape(href) + "\">" + html_escape(text) + "</a>";
}

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::string points_table(const ReportDocument& doc) {
  const ReportTable& t = doc.table;
  std::string out = "<div class=\"scroll\"><table>\n<tr><th class=\"text\">point</th><th class=\"text\">state</th>";
  for (size_t k : t.columns) out += "<th class=\"text\">" + html_escape(t.short_keys[k]) + "</th>";
  for (const std::string& m : t.metrics) {
    out += "<th>" + html_escape(m) + "</th><th>n</th>";
    if (has(t.paper_metrics, m)) out += "<th>" + html_escape(m) + " (paper)</th>";
    if (has(t.baseline_metrics, m)) out += "<th>" + html_escape(m) + " (baseline)</th>";
  }
  out += "<th>params</th><th>tokens/s</th><th>ranks × threads</th><th>wall (s)</th>";
  for (const std::string& a : t.analysis) out += "<th>" + html_escape(a) + "</th>";
  out += "<th class=\"text\">runs</th></tr>\n";
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const ReportRow& row = t.rows[r];
    const bool all_done = row.state == "done";
    out += all_done ? "<tr>" : "<tr class=\"notdone\">";
    out += cell(row.label, "text") + cell(row.state, all_done ? "text state-done" : "text state-other");
    for (size_t k : t.columns) out += cell(row.values[k], "text");
    for (const std::string& m : t.metrics) {
      const PooledStat& s = row.metrics.at(m);
      out += cell(format_stat(s), is_best(doc.highlights, m, r) ? "best" : "") + cell(std::to_string(s.n));
      if (has(t.paper_metrics, m)) {
        const auto it = row.paper.find(m);
        out += cell(it == row.paper.end() ? "" : format_value(it->second), "paper");
      }
      if (has(t.baseline_metrics, m)) {
        const auto it = row.baseline.find(m);
        out += cell(it == row.baseline.end() ? "" : format_value(it->second), "paper");
      }
    }
    out += cell(row.params.has_mean() ? format_count(row.params.mean) : "");
    out += cell(row.tokens_per_s.has_mean()
                    ? format_value(std::round(row.tokens_per_s.mean)) + (row.speed_jobs > 1 ? " †" : "")
                    : "");
    out += cell(ranks_by_threads(row));
    out += cell(row.wall_s.has_mean() ? format_value(std::round(row.wall_s.mean * 10) / 10) : "");
    for (const std::string& a : t.analysis) {
      const auto it = row.analysis.find(a);
      out += cell(it == row.analysis.end() ? "" : format_stat(it->second));
    }
    out += "<td class=\"text\">";
    for (size_t i = 0; i < row.runs.size(); ++i) {
      const RunRecord& run = doc.inputs.runs[row.runs[i]];
      if (i) out += ' ';
      out += link(relative_link(run.dir, doc.out_dir), run_name(run));
    }
    out += "</td></tr>\n";
  }
  return out + "</table></div>\n";
}

std::string runs_table(const ReportDocument& doc) {
  const ReportTable& t = doc.table;
  std::string out = "<div class=\"scroll\"><table>\n<tr><th class=\"text\">point</th><th class=\"text\">run</th>"
                    "<th>seed</th><th class=\"text\">state</th>";
  for (const std::string& m : t.metrics) out += "<th>" + html_escape(m) + "</th>";
  out += "<th class=\"text\">problems</th></tr>\n";
  for (const ReportRow& row : t.rows)
    for (size_t r : row.runs) {
      const RunRecord& run = doc.inputs.runs[r];
      const std::string dir = relative_link(run.dir, doc.out_dir);
      out += run.done() ? "<tr>" : "<tr class=\"notdone\">";
      out += cell(row.label, "text") + "<td class=\"text\">" + link(dir, dir) + "</td>";
      out += cell(run.seed ? std::to_string(*run.seed) : "") + cell(run.state, "text");
      for (const std::string& m : t.metrics) {
        const auto v = run.final_metric(m);
        out += cell(v ? format_value(*v) : "");
      }
      std::string problems;
      for (const std::string& p : run.problems) problems += (problems.empty() ? "" : "; ") + p;
      out += "<td class=\"text\" style=\"white-space: normal\">" + html_escape(problems) + "</td></tr>\n";
    }
  return out + "</table></div>\n";
}
}  // namespace

std::string report_html(const ReportDocument& doc) {
  const ReportTable& t = doc.table;
  const std::string title = doc.inputs.sources.size() == 1 && doc.inputs.sources[0].sweep
                                ? doc.inputs.sources[0].sweep->name
                                : "runs";
  const std::string refresh =
      doc.refresh_s > 0 ? "<meta http-equiv=\"refresh\" content=\"" + std::to_string(doc.refresh_s) + "\">\n" : "";
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n" + refresh + "<title>Report: " +
                    html_escape(title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  out += "<h1>Report: " + html_escape(title) + "</h1>\n";
  if (doc.refresh_s > 0)
    out += "<p class=\"note live\">Live: written at " + utc_now() + "; the page reloads every " +
           std::to_string(doc.refresh_s) + " s while runs train (<code>transnormer report --watch</code>), and "
           "stops once they end.</p>\n";
  if (!doc.page_note.empty()) out += "<p class=\"note live\">" + html_escape(doc.page_note) + "</p>\n";
  out += "<ul class=\"inputs\">\n";
  size_t run_dirs = 0;
  for (const ReportSource& s : doc.inputs.sources) run_dirs += !s.sweep;
  for (const ReportSource& s : doc.inputs.sources)
    if (s.sweep)
      out += "<li>" + link(relative_link(s.dir, doc.out_dir), s.dir) + ": sweep " + html_escape(s.sweep->name) + " (" +
             std::to_string(s.sweep->points.size()) + " runs)" +
             (reproduce_command(s).empty() ? "" : "; rerun with <code>" + html_escape(reproduce_command(s)) + "</code>") +
             "</li>\n";
  if (run_dirs > 5)
    out += "<li>" + std::to_string(run_dirs) + " run directories (see Runs below)</li>\n";
  else
    for (const ReportSource& s : doc.inputs.sources)
      if (!s.sweep) out += "<li>" + link(relative_link(s.dir, doc.out_dir), s.dir) + ": run directory</li>\n";
  out += "</ul>\n<p class=\"note\">Each row pools the seeds of one point: mean ± sample standard deviation over "
         "its done runs, n = how many. Runs that are not done are counted in the state column and do not enter "
         "the statistics.";
  out += " " + html_escape(row_order_text(t));
  out += "</p>\n";
  if (const std::string shared = describe_shared(doc.highlights); !shared.empty())
    out += "<p><b>Shared by every run:</b> " + html_escape(shared) + ".</p>\n";
  if (!doc.highlights.best.empty() || !doc.highlights.unranked.empty()) {
    out += "<ul class=\"best\">\n";
    for (const BestValue& b : doc.highlights.best) out += "<li>" + html_escape(describe_best(t, b)) + "</li>\n";
    if (const std::string unranked = describe_unranked(t, doc.highlights); !unranked.empty())
      out += "<li>" + html_escape(unranked) + "</li>\n";
    out += "</ul>\n";
  }
  out += "<h2>Points</h2>\n" + points_table(doc);
  for (const std::string& note : {speed_note(t), baseline_note(t)})
    if (!note.empty()) out += "<p class=\"note\">" + html_escape(note) + "</p>\n";

  std::string problems;
  for (const ReportRow& row : t.rows)
    for (size_t r : row.runs) {
      const RunRecord& run = doc.inputs.runs[r];
      if (!run_has_problem(run)) continue;
      problems += "<li><b>" + html_escape(row.label) + "</b>, " +
                  link(relative_link(run.dir, doc.out_dir), run_name(run)) + " (" + html_escape(run.state) + "): ";
      std::string text;
      for (const std::string& p : run.problems) text += (text.empty() ? "" : "; ") + p;
      problems += html_escape(text.empty() ? "no error was recorded" : text) + "</li>\n";
    }
  if (!problems.empty()) out += "<h2>Problems</h2>\n<ul class=\"problems\">\n" + problems + "</ul>\n";

  if (!doc.plots.empty()) {
    out += "<h2>Plots</h2>\n<div class=\"plots\">\n";  // side by side where the page is wide enough
    for (size_t i = 0; i < doc.plots.size(); ++i)
      out += "<figure>\n" + inline_svg(doc.plots[i].svg, i) + "\n<figcaption>" + html_escape(doc.plots[i].title) +
             " (" + link(doc.plots[i].file, doc.plots[i].file) + ")</figcaption>\n</figure>\n";
    out += "</div>\n";
  }
  out += "<h2>Runs</h2>\n" + runs_table(doc);
  return out + "</body>\n</html>\n";
}

}  // namespace tn
