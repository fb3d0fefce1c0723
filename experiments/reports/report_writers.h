#pragma once
// The four documents of `report`, each as text (report.cpp writes them atomically): report.md,
// report.csv, report.json and report.html. Each links a row's runs by their path relative to the
// report folder.
#include <string>
#include <vector>

#include "experiments/reports/report_highlights.h"
#include "experiments/reports/report_inputs.h"
#include "experiments/reports/report_plots.h"
#include "experiments/reports/report_table.h"

namespace tn {

struct ReportDocument {
  const ReportInputs& inputs;
  const ReportTable& table;
  const std::vector<ReportPlot>& plots;
  const ReportHighlights& highlights;
  std::string out_dir;  // where the documents go (links are relative to it)
  int refresh_s = 0;    // report --watch: report.html reloads itself every refresh_s seconds; 0: never
  std::string page_note;  // ReportOptions::page_note
};

/// A run's name in a row: "seed 3", or its directory's name when it has no seed.
std::string run_name(const RunRecord& run);
/// Whether a run belongs in the list of problems: it has problems, or it failed, diverged, or
/// is incomplete or unreadable.
bool run_has_problem(const RunRecord& run);

/// Markdown: what was read, the shared settings, the table (mean ± std, n, the paper's value beside
/// the measured; the best mean of each metric in bold), the best point of each metric and the points
/// clearly behind it, the runs' problems, the plots as images.
std::string report_markdown(const ReportDocument& doc);
/// CSV: one header row, then one row per point; mean, std and n in columns of their own, exact
/// numbers, blank where there is none.
std::string report_csv(const ReportDocument& doc);
/// JSON: the shared settings, the best point of each metric, the rows with their pooled statistics
/// and every run's own final metrics, seed, state, problems and directory (relative to the report),
/// so each pooled value traces back to its runs.
std::string report_json(const ReportDocument& doc);
/// One self-contained HTML page (inline CSS and SVG, no scripts or external files): the tables
/// of `report_markdown`, a table of every run, and the plots.
std::string report_html(const ReportDocument& doc);

}  // namespace tn
