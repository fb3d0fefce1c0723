#include "experiments/reports/report.h"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "core/error.h"
#include "core/io/atomic_file.h"
#include "core/io/dir_lock.h"
#include "experiments/reports/report_inputs.h"
#include "experiments/reports/report_plots.h"
#include "experiments/reports/report_table.h"
#include "experiments/reports/report_writers.h"

namespace tn {

namespace fs = std::filesystem;

ReportResult write_report(const ReportOptions& options) {
  const ReportInputs inputs = read_report_inputs(options.dirs);
  const ReportTable table = build_table(inputs, {options.metrics, options.by});
  const std::vector<ReportPlot> plots = make_report_plots(inputs, table);
  const ReportHighlights highlights = report_highlights(inputs, table);

  ReportResult result;
  result.out_dir = !options.out_dir.empty() ? options.out_dir : options.dirs.size() == 1 ? options.dirs[0] : "report";
  const fs::path folder = plots.empty() ? fs::path(result.out_dir) : fs::path(result.out_dir) / "plots";
  check_folder_path(result.out_dir, "report folder");
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) throw IoError("cannot create " + folder.string() + ": " + ec.message());
  const ReportDocument doc{inputs, table, plots, highlights, result.out_dir};
  auto write = [&](const std::string& name, const std::string& text) {
    const std::string path = (fs::path(result.out_dir) / name).string();
    write_file_atomic(path, text);
    result.files.push_back(path);
  };
  write("report.md", report_markdown(doc));
  write("report.csv", report_csv(doc));
  write("report.json", report_json(doc));
  write("report.html", report_html(doc));
  for (const ReportPlot& p : plots) write(p.file, p.svg);

  result.rows = table.rows.size();
  result.runs = inputs.runs.size();
  for (const RunRecord& run : inputs.runs) result.done += run.done();
  spdlog::info("report: {} runs ({} done) in {} rows, {} plots -> {}", result.runs, result.done, result.rows,
               plots.size(), (fs::path(result.out_dir) / "report.md").string());
  return result;
}

}  // namespace tn
