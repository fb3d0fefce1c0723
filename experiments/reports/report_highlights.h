#pragma once
// What a reader of a report looks for first: the settings every run shares (steps, batch, model
// size, ...), and, per metric, the best point and which points it is clearly better than. "Clearly"
// is the rule docs/results uses: the gap between two means exceeds twice the larger of their
// standard deviations (over seeds); with one seed there is no std and nothing is called clear.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "experiments/outputs/metrics.h"
#include "experiments/reports/report_inputs.h"
#include "experiments/reports/report_table.h"

namespace tn {

/// The best row of one metric.
struct BestValue {
  std::string metric;  // "valid.ppl"
  bool lower_is_better = true;
  size_t row = 0;      // index into ReportTable::rows
  /// Rows whose mean is worse by more than 2 × max(std of the best, std of that row); each has
  /// n ≥ 2 and so does the best.
  std::vector<size_t> clearly_worse;
  /// The data its rows learn when the report holds several ("data.reader listops"): rows are
  /// ranked only against rows of the same data. "" when every row learns the same.
  std::string group;
};

struct ReportHighlights {
  /// ("train.max_steps", "450"), in a fixed order: the keys of kSharedKeys (report_highlights.cpp)
  /// whose config value is the same in every run that has a config, then "tokens per run" when
  /// steps, batch and seq_len are all shared, and "params" (one value, or "min–max" over the rows).
  std::vector<std::pair<std::string, std::string>> shared;
  /// Per chosen metric (column order) and data group, where two rows at least have a mean (one row
  /// alone is not called best); rows evaluated on
  /// part of their splits (train.limit_eval_batches) are neither best nor behind.
  std::vector<BestValue> best;
  std::vector<size_t> unranked;  // rows left out of `best` for a partial evaluation, in row order
};

/// The highlights of `table` (built from `inputs`).
ReportHighlights report_highlights(const ReportInputs& inputs, const ReportTable& table);

/// Whether `row` is the best of `metric` in `h`.
bool is_best(const ReportHighlights& h, const std::string& metric, size_t row);

/// The sentence under a table whose rows carry a † on their speed (ReportRow::speed_jobs > 1):
/// those tokens/s and wall times were measured beside other points; "" when no row is marked.
std::string speed_note(const ReportTable& table);

/// A row's speed setting for the tables: "2 × 1" (ranks × threads per rank), "" when unknown.
std::string ranks_by_threads(const ReportRow& row);

/// The sentence saying how the rows are ordered: by the --by key, in the sweep file's order, or
/// in the order the run directories were given.
std::string row_order_text(const ReportTable& table);

/// The sentence explaining a baseline column ("" when the table has none).
std::string baseline_note(const ReportTable& table);

/// The command that reruns a sweep source: "[cd CWD && ]transnormer sweep FILE --out DIR [--set S]
/// [--grid G] [--jobs J --threads-per-job T] [--data-root R]" (the command line's --set and --grid
/// as sweep.json records them, the jobs and threads of its points' launches when recorded; the cd
/// to where the sweep ran when FILE or DIR is relative; every path shell-quoted); "" for a run
/// directory or a sweep without its file's name.
std::string reproduce_command(const ReportSource& source);

/// "Not ranked: a, b (evaluated on at most train.limit_eval_batches batches of each split)." ("" when
/// every row is ranked).
std::string describe_unranked(const ReportTable& table, const ReportHighlights& h);

/// "task language_modeling, d_model 128, ..., params 3.03M" (plain text; "" when nothing is shared).
std::string describe_shared(const ReportHighlights& h);
/// "valid.ppl (lower is better): best t1, 636 ± 37; clearly behind it (gap > 2 × the larger std):
/// ffn, none." or "...; no point is clearly behind it." (plain text).
std::string describe_best(const ReportTable& table, const BestValue& best);

}  // namespace tn
