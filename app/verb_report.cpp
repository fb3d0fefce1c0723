// `transnormer report DIR... [--out DIR] [--metrics test.ppl,valid.ppl] [--by AXIS] [--label KEYS|dir]
//                    [--columns KEYS] [--watch S]`
// Tables and plots of sweep folders and run directories (experiments/reports/report.h):
// report.md, report.csv, report.json, report.html and plots/*.svg. Logs go to stderr.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <regex>
#include <thread>

#include "app/command_line.h"
#include "app/verbs.h"
#include "core/error.h"
#include "core/platform/process/shell_quote.h"
#include "core/platform/process/stop_signal.h"
#include "core/platform/system.h"
#include "experiments/reports/report.h"

namespace tn::app {
namespace {

/// `report --watch S`: rewrites the report every S seconds, report.html reloading itself, while a
/// run or sweep among the DIRs is being written; then once more as a final page. 0, or 128 +
/// signal when SIGTERM or SIGINT ended the watch (the page is left final).
int watch(ReportOptions options, int every_s) {
  install_stop_handlers();
  options.refresh_s = every_s;
  options.quiet = true;
  ReportResult r;
  for (;;) {
    r = write_report(options);
    if (r.live == 0) break;
    spdlog::info("report --watch: {} runs ({} done), {} of the inputs still training -> {}/report.html; the next "
                 "update in {} s", r.runs, r.done, r.live, r.out_dir, every_s);
    for (int waited_ms = 0; waited_ms < every_s * 1000 && !stop_signal(); waited_ms += 100)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (stop_signal()) break;
  }
  options.refresh_s = 0;
  const int signal = stop_signal();
  if (signal && r.live > 0)
    options.page_note = "The watch was stopped by " + std::string(signal_name(signal)) + " at " + utc_now() +
                        " while runs still trained: their states are as of then, and the page no longer reloads. "
                        "Run `" + command_line() + "` again to follow them.";
  r = write_report(options);
  spdlog::info("report: {} runs ({} done) in {} rows -> {}/report.html, final", r.runs, r.done, r.rows, r.out_dir);
  if (signal) return exit_code_for_signal(signal);
  spdlog::info("report --watch: every run has ended; report.html is final");
  return 0;
}

/// A comma-separated list as typed ("valid.ppl, test.ppl"): each name trimmed, repeats dropped.
/// Throws ConfigError, naming the flag, when it was given but names nothing.
void tidy_list(std::vector<std::string>& names, const char* flag) {
  if (names.empty()) return;
  std::vector<std::string> out;
  for (std::string name : names) {
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  if (out.empty()) throw ConfigError(std::string(flag) + " is empty: name at least one, or leave " + flag + " out");
  names = std::move(out);
}

/// Refuses a DIR written as Hydra writes an override ("metrics=test.ppl") that names no folder,
/// with the option that says it here (--metrics test.ppl). ConfigError (exit 2).
void refuse_hydra_words(const std::vector<std::string>& dirs) {
  static const std::regex word("^([A-Za-z_][A-Za-z0-9_]*)=(.*)$");
  for (const std::string& dir : dirs) {
    std::smatch m;
    std::error_code ec;
    if (!std::regex_match(dir, m, word) || std::filesystem::exists(dir, ec)) continue;
    std::string flag = m[1].str();
    std::replace(flag.begin(), flag.end(), '_', '-');
    throw ConfigError(dir + ": no such folder; `report` takes options, not key=value overrides: --" + flag + " " +
                      shell_quote(m[2].str()) + " (transnormer report --help lists them)");
  }
}

}  // namespace

Action add_report_verb(CLI::App& app) {
  auto args = std::make_shared<ReportOptions>();
  CLI::App* sub = app.add_subcommand("report", "Tables and plots of sweeps and run directories, seeds pooled");
  sub->add_option("dirs", args->dirs, "sweep folders (with sweep.json) or run directories (with config.yaml)")
      ->required();
  sub->add_option("--out", args->out_dir, "folder for the report (default: the DIR when one is given, else ./report)");
  sub->add_option("--metrics", args->metrics, "split.metric names, comma-separated (default: every final metric but counts)")
      ->delimiter(',')
      ->allow_extra_args(false);
  sub->add_option("--label", args->label,
                  "name rows by these keys (comma-separated), or `dir` by their run folders (default: a sweep's "
                  "rows by the keys they vary; run directories by theirs when at most two, else by their folders)")
      ->delimiter(',')
      ->allow_extra_args(false);
  sub->add_option("--columns", args->columns,
                  "the varying keys to show as table columns, comma-separated (default: every one; report.json "
                  "keeps them all)")
      ->delimiter(',')
      ->allow_extra_args(false);
  sub->add_option("--by", args->by, "order rows by this key and plot the final metrics over it")
      ->check([](const std::string& key) {
        return key.empty() ? std::string("give a config key or sweep axis, e.g. --by model.d_model (or leave --by out)")
                           : std::string();
      });
  auto every = std::make_shared<int>(0);
  sub->add_option("--watch", *every,
                  "a live view: rewrite the report every S seconds while its runs train (report.html reloads "
                  "itself; open it in a browser), then once more when they end")
      ->check(CLI::Range(1, 86400));
  return [args, every]() {
    refuse_hydra_words(args->dirs);
    tidy_list(args->metrics, "--metrics");
    tidy_list(args->label, "--label");
    tidy_list(args->columns, "--columns");
    if (*every > 0) return watch(*args, *every);
    write_report(*args);
    return 0;
  };
}

}  // namespace tn::app
