#pragma once
// Where datasets live: --data-root if given, else $TRANSNORMER_DATA, else ./datasets (docs/cli/README.md, "The data root").
#include <string>

namespace tn {

/// Resolves the data root from an explicit flag value (may be empty) and the environment.
std::string resolve_data_root(const std::string& flag_value);

/// Joins a dataset-relative path onto the root; absolute paths are returned unchanged.
std::string data_path(const std::string& root, const std::string& relative);

/// A file named on the command line (--data): as given when absolute or when it exists from the
/// current folder, else taken from the data root (as a spec's data paths are).
std::string find_data_file(const std::string& root, const std::string& path);

}  // namespace tn
