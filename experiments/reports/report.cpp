#include "experiments/reports/report.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "core/platform/io/dir_lock.h"
#include "core/platform/io/own_files.h"
#include "experiments/reports/report_inputs.h"
#include "experiments/reports/report_plots.h"
#include "experiments/reports/report_table.h"
#include "experiments/reports/report_writers.h"

namespace tn {

namespace fs = std::filesystem;

namespace {

/// The plot files ("plots/x.svg") that the report.json in `out_dir` lists: what an earlier report
/// wrote there. Empty when there is none or it cannot be read.
std::vector<std::string> earlier_plots(const fs::path& out_dir) {
  std::vector<std::string> files;
  try {
    const nlohmann::json j = nlohmann::json::parse(read_file((out_dir / "report.json").string()));
    for (const nlohmann::json& f : j.at("plots")) files.push_back(f.get<std::string>());
  } catch (const std::exception&) {
  }
  return files;
}

/// Removes the plots an earlier report wrote in `out_dir` that this one did not write again, so a
/// reused folder holds no curve of a metric the report no longer has. Only regular files under
/// plots/ named by the earlier report.json go; anything else there is the user's and stays.
void remove_stale_plots(const fs::path& out_dir, const std::vector<std::string>& earlier,
                        const std::vector<ReportPlot>& written) {
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(out_dir / "plots", ec))) return;  // a link: nothing through it
  for (const std::string& file : earlier) {
    const fs::path rel = fs::path(file).lexically_normal();
    if (rel.parent_path() != "plots" || rel.extension() != ".svg") continue;
    if (std::any_of(written.begin(), written.end(), [&](const ReportPlot& p) { return p.file == file; })) continue;
    if (fs::is_regular_file(fs::symlink_status(out_dir / rel, ec))) fs::remove(out_dir / rel, ec);
  }
  if (fs::is_directory(out_dir / "plots", ec) && fs::is_empty(out_dir / "plots", ec)) fs::remove(out_dir / "plots", ec);
}

}  // namespace

ReportResult write_report(const ReportOptions& options) {
  const ReportInputs inputs = read_report_inputs(options.dirs);
  const ReportTable table = build_table(inputs, {options.metrics, options.by, options.label, options.columns});
  const std::vector<ReportPlot> plots = make_report_plots(inputs, table);
  const ReportHighlights highlights = report_highlights(inputs, table);

  ReportResult result;
  result.out_dir = !options.out_dir.empty() ? options.out_dir : options.dirs.size() == 1 ? options.dirs[0] : "report";
  const fs::path folder = plots.empty() ? fs::path(result.out_dir) : fs::path(result.out_dir) / "plots";
  check_folder_path(result.out_dir, "report folder");
  // Its own files only, checked before anything is written: a plots/ that is a link (to a user's
  // folder) or a report.md that is a link or FIFO is refused, never written through or deleted.
  refuse_non_directory((fs::path(result.out_dir) / "plots").string(), "the report");
  for (const char* name : {"report.md", "report.csv", "report.json", "report.html"})
    refuse_non_regular((fs::path(result.out_dir) / name).string(), "the report");
  for (const ReportPlot& p : plots) refuse_non_regular((fs::path(result.out_dir) / p.file).string(), "the report");
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) throw IoError("cannot create " + folder.string() + ": " + ec.message());
  const std::vector<std::string> stale = earlier_plots(result.out_dir);
  const ReportDocument doc{inputs, table, plots, highlights, result.out_dir, options.refresh_s,
                           options.page_note};
  auto write = [&](const std::string& name, const std::string& text) {
    const std::string path = (fs::path(result.out_dir) / name).string();
    write_own_file(path, text, "the report");
    result.files.push_back(path);
  };
  write("report.md", report_markdown(doc));
  write("report.csv", report_csv(doc));
  write("report.json", report_json(doc));
  write("report.html", report_html(doc));
  for (const ReportPlot& p : plots) write(p.file, p.svg);
  remove_stale_plots(result.out_dir, stale, plots);

  result.rows = table.rows.size();
  result.runs = inputs.runs.size();
  for (const RunRecord& run : inputs.runs) result.done += run.done();
  for (const ReportSource& s : inputs.sources)
    result.live += s.sweep ? DirLock::busy(s.dir) : DirLock::busy(s.dir) && !fs::exists(fs::path(s.dir) / "summary.json");
  if (!options.quiet)
    spdlog::info("report: {} runs ({} done) in {} rows, {} plots -> {}", result.runs, result.done, result.rows,
               plots.size(), (fs::path(result.out_dir) / "report.md").string());
  return result;
}

}  // namespace tn
