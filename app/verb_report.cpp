// `transnormer report DIR... [--out DIR] [--metrics test.ppl,valid.ppl] [--by AXIS] [--label KEYS|dir]
//                    [--columns KEYS]`
// Tables and plots of sweep folders and run directories (experiments/reports/report.h):
// report.md, report.csv, report.json, report.html and plots/*.svg. Logs go to stderr.
#include "app/verbs.h"
#include "experiments/reports/report.h"

namespace tn::app {

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
  return [args]() {
    write_report(*args);
    return 0;
  };
}

}  // namespace tn::app
