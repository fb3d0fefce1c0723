#pragma once
// The plots of `report`, as SVG documents (experiments/plots/svg_plot.h): training loss vs
// step, the first chosen validation metric vs step (each a mean over a row's seeds with a min-max
// band), each chosen metric per row (mean ± std; with --by over that axis), the locality curves
// l(r) of the runs with a locality.json (against the uniform l = r), and the per-layer gradient
// RSD of runs with grad_stats. A plot without data is left out.
#include <string>
#include <vector>

#include "experiments/reports/report_inputs.h"
#include "experiments/reports/report_table.h"

namespace tn {

struct ReportPlot {
  std::string file;   // relative to the report folder: "plots/train_loss.svg"
  std::string title;
  std::string svg;    // the document
};

/// Renders every plot that has data. Curves pool a row's done runs; a row with none is drawn
/// from the runs it has, its legend label marked with their state.
std::vector<ReportPlot> make_report_plots(const ReportInputs& inputs, const ReportTable& table);

}  // namespace tn
