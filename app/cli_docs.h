#pragma once
// A bash completion script and a man page, generated from the CLI definition itself (every verb,
// subcommand and option main() registers), so neither can fall behind it. CMake runs
// `transnormer completion bash` and `transnormer manpage` after the build and installs the results
// (share/bash-completion/completions/transnormer, share/man/man1/transnormer.1).
#include <CLI/CLI.hpp>
#include <string>

namespace tn::app {

/// The bash completion script for `app` (the root of the command line): verbs, subcommands and
/// options at each level; an option's value completes from the values it lists (CLI::IsMember),
/// else as a file name, as do the positional arguments of a verb that takes them.
std::string bash_completion(const CLI::App& app);

/// The man page (roff, man(7) macros) for `app`: name, synopsis, every verb with its options and
/// their help and value types as --help shows them, exit codes, environment. `version` goes in the footer.
std::string man_page(const CLI::App& app, const std::string& version);

}  // namespace tn::app
