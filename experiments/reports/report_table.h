#pragma once
// The table of `report`: one row per point, its seeds pooled. Runs are grouped by the keys their
// experiments differ in: for sweeps, the points' overrides without train.seed; for plain run
// directories, the flattened config.yaml keys whose values differ across the runs, without
// train.seed and train.threads. Only done runs enter the statistics; the others are counted in
// the row's state.
#include <map>
#include <string>
#include <vector>

#include "experiments/reports/pooled_stat.h"
#include "experiments/reports/report_inputs.h"

namespace tn {

struct ReportRow {
  std::string label;                // "normalize=scaling": short names of ReportTable::label_keys
  std::vector<std::string> values;  // one per ReportTable::keys ("" when the run does not set it)
  std::vector<size_t> runs;         // indices into ReportInputs::runs, in input order
  size_t done = 0;                  // runs that enter the statistics
  std::string state;                // "done", or e.g. "failed (2 of 3 seeds), pending (1 of 3 seeds)"
  std::map<std::string, PooledStat> metrics;   // by "split.metric"
  std::map<std::string, double> paper;         // published values ("test.ppl"), from config.yaml
  /// The task's reference value of a metric on the same split (summary.json's baselines,
  /// "<kind>_<split>_<metric>": majority_valid_accuracy, constant_valid_pearson, unigram_test_ppl),
  /// by "split.metric"; the first done run's.
  std::map<std::string, double> baseline;
  PooledStat params, tokens_per_s, wall_s;     // wall: the sweep's wall_s, else train.total_s
  /// The most sweep points that ran side by side with one of this row's runs (the sweep's --jobs);
  /// above 1 its tokens/s and wall time were shared with other points. 0: unknown or not a sweep.
  int speed_jobs = 0;
  /// The most ranks (data-parallel processes) and threads per rank its runs trained with
  /// (summary.json train.ranks and train.threads): tokens/s counts every rank's tokens. 0: no run.
  int ranks = 0, threads = 0;
  std::map<std::string, PooledStat> analysis;  // by "analysis.grad_stats.rsd_mean"
};

struct ReportTable {
  std::vector<std::string> keys;        // the varying keys, full paths ("sweep" for the sweep's name)
  std::vector<std::string> short_keys;  // their last path component, or more where that is ambiguous
  /// The keys row labels name: every key for sweeps; for plain runs, without a key that only
  /// relabels another (its values pair one-to-one with the other's, and the pairs repeat: a
  /// resolved model.channel_mixer.d_ff beside model.d_model). Its column stays.
  std::vector<std::string> label_keys;
  /// Indices into keys of the key columns the tables show (--columns; default every key). The
  /// JSON keeps every key.
  std::vector<size_t> columns;
  bool sweep_order = false;             // rows in the order of a sweep file (some input is a sweep)
  std::vector<std::string> metrics;     // the chosen "split.metric" names, in column order
  std::vector<std::string> available;   // every metric name the runs hold
  std::vector<std::string> paper_metrics;  // chosen metrics with a paper value in some row
  std::vector<std::string> baseline_metrics;  // chosen metrics with a baseline in some row
  std::vector<std::string> analysis;    // scalar analysis values found in done runs
  std::string by;                       // the key rows are ordered by ("" none)
  bool by_numeric = false;              // and whether all its values are numbers
  std::vector<ReportRow> rows;
};

struct TableOptions {
  /// "split.metric" names; empty: every final metric of every split except counts (metrics
  /// written as integers, such as tokens), splits valid, test, then the rest.
  std::vector<std::string> metrics;
  std::string by;  // a varying key, full or short ("normalize"); "" keeps the input order
  /// How rows are named: empty (default: a sweep's rows by the keys they vary; run directories
  /// by theirs when at most two, else by their folders), {"dir"} (every row by its runs'
  /// folders), or keys (full or short names).
  std::vector<std::string> label;
  std::vector<std::string> columns;  // the key columns to show (full or short names); empty: all
};

/// Groups `inputs.runs` into rows and pools them. Throws ConfigError for a metric the runs do
/// not hold (listing the available names) or a --by key that is not a varying key (listing them).
ReportTable build_table(const ReportInputs& inputs, const TableOptions& options);

}  // namespace tn
