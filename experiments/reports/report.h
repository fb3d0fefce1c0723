#pragma once
// `transnormer report DIR...`: the table and plots of sweeps and run directories, whatever the
// task: metrics are the names their summary.json and metrics.jsonl hold. docs/architecture.md
// "Reports" describes the inputs, the grouping and the outputs.
#include <string>
#include <vector>

namespace tn {

struct ReportOptions {
  std::vector<std::string> dirs;     // sweep folders (sweep.json) or run directories (config.yaml)
  std::string out_dir;               // "" : the DIR itself when one is given, else ./report
  std::vector<std::string> metrics;  // "split.metric"; empty: every final non-count metric
  std::string by;                    // order rows by this varying key, and plot finals over it
  std::vector<std::string> label;    // --label: "dir", or the keys that name rows; empty: the default
  std::vector<std::string> columns;  // --columns: the key columns shown; empty: every varying key
  /// report --watch: report.html reloads itself every refresh_s seconds (a live page); 0: a final page.
  int refresh_s = 0;
  /// A sentence report.html shows at its top ("" : none): why a page that was live is now final
  /// though runs still train (report --watch stopped by a signal).
  std::string page_note;
  bool quiet = false;  // no log line per write (report --watch logs its own)
};

struct ReportResult {
  std::string out_dir;
  std::vector<std::string> files;  // every file written, report.md first
  size_t rows = 0, runs = 0, done = 0;
  /// Inputs still being written: run folders a training process holds, sweep folders a sweep
  /// process holds (report --watch goes on while there are any).
  size_t live = 0;
};

/// Reads the DIRs, pools their runs into rows and writes report.md, report.csv, report.json,
/// report.html and plots/*.svg into the output folder (created), each atomically. Throws
/// DataError for a DIR that is neither a sweep folder nor a run directory, ConfigError for an
/// unknown metric or --by key, IoError when a file cannot be written.
ReportResult write_report(const ReportOptions& options);

}  // namespace tn
