#pragma once
// `transnormer train --dry-run`: everything a run checks before its first step, without training or
// writing anything.
#include <string>

#include "experiments/runner/runner.h"
#include "experiments/spec/spec.h"

namespace tn {

/// Resolves `spec` as run_training would: checks the run directory (the same refusals as a run:
/// ConfigError for a folder holding a run without resume or overwrite, or nothing to resume),
/// reads the data (DataError for a missing or malformed file) and fills vocab_size, estimates the
/// memory (ConfigError when it cannot fit). Returns the run's config.yaml text followed by comment
/// lines: the run directory, the data files, the parameter count and memory estimate, and the
/// schedule's warnings. Writes nothing.
std::string dry_run(ExperimentSpec spec, const RunOptions& options);

}  // namespace tn
