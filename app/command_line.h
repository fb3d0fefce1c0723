#pragma once
// The process's command line as the user typed it (arguments shell-quoted where needed), kept by
// main() for the verbs that record it (train's run.json).
#include <string>

namespace tn::app {

/// Keeps argv (main() calls it first).
void keep_command_line(int argc, char** argv);
/// "transnormer train 'my spec.yaml' --set train.max_steps=10": argv[0] as its file name, every
/// other argument as shell_quote (core/platform/process/shell_quote.h) writes it.
const std::string& command_line();

}  // namespace tn::app
