#pragma once
// The DIR arguments of `report`: each a sweep folder (with sweep.json: every point of the sweep
// becomes a run, in the sweep's order) or a run directory (with config.yaml).
#include <optional>
#include <string>
#include <vector>

#include "experiments/reports/run_record.h"
#include "experiments/sweeps/sweep_index.h"

namespace tn {

struct ReportSource {
  std::string dir;
  std::optional<SweepIndex> sweep;  // set for a sweep folder (its sweep.json)
};

struct ReportInputs {
  std::vector<ReportSource> sources;  // one per DIR, in the order given
  std::vector<RunRecord> runs;        // every run, in source order (a sweep's in its point order)
};

/// Reads every DIR. A sweep point's state is the sweep's, except that a point the sweep calls
/// done without a readable summary.json is "incomplete" (or "unreadable"); the sweep's error and
/// wall_s are kept with the run. Throws DataError naming a DIR that does not exist or is neither
/// a sweep folder nor a run directory, and for a malformed sweep.json.
ReportInputs read_report_inputs(const std::vector<std::string>& dirs);

}  // namespace tn
