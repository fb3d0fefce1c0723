#pragma once
// Where a config named on the command line is: as given when that file exists, else under the
// installed share folder (<prefix>/share/transnormer/configs, found from the binary's own path),
// so `transnormer train quickstart.yaml` works from any folder once the package is installed.
#include <string>

namespace tn::app {

/// `path` when it exists (or when no installed copy exists: the caller's error then names it as
/// given); else <binary>/../share/transnormer/configs/<path> when that file exists.
std::string find_config(const std::string& path);

}  // namespace tn::app
