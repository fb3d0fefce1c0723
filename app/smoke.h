// `--smoke` of `train` and `sweep` (Lightning's fast_dev_run): a spec or a whole sweep run end to
// end in seconds, to check that it reads its data, builds, trains, evaluates and writes: 3 steps,
// one validation and one test at the end on 2 batches of each split, a log line every step, into a
// scratch folder (a new one under $TMPDIR unless --out names one).
#pragma once
#include <string>
#include <vector>

namespace tn::app {

/// The overrides a smoke test adds after the user's own --set values (so they win).
std::vector<std::string> smoke_overrides();

/// Warns, for each of `assignments` ("key=value", as --set takes them) that sets a key the smoke
/// test sets to another value, that the smoke test's value is the one used.
void warn_smoke_overrides(const std::vector<std::string>& assignments);

/// A new, empty folder for a smoke test of `name` under $TMPDIR (else /tmp):
/// transnormer-smoke-<name>-XXXXXX. Throws ConfigError when TMPDIR names no folder, IoError when
/// it cannot be made.
std::string smoke_folder(const std::string& name);

/// The name smoke_folder would make, not made: ".../transnormer-smoke-<name>-XXXXXX" (for a dry run).
std::string smoke_folder_pattern(const std::string& name);

}  // namespace tn::app
