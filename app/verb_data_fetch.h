#pragma once
// `transnormer data fetch [--lra] [--data-root DIR]`: downloads the datasets from their official
// sources into the data root, checking each file's sha256, by running the fetch script the tool
// ships (installed: <prefix>/share/transnormer/scripts/fetch_data.sh; a build tree: the source's
// scripts/fetch_data.sh). Parts already there are skipped. Exit 0 when it ends well, else 1.
#include <string>
#include <utility>

#include "app/verbs.h"

namespace tn::app {

/// The fetch script this binary ships with: the installed copy beside it, else the source tree's;
/// "" when neither is there.
std::string fetch_script_path();

/// Registers `fetch` under `data`; returns it and the action that runs it.
std::pair<CLI::App*, Action> add_data_fetch(CLI::App& data);

}  // namespace tn::app
