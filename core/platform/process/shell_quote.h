#pragma once
// Command lines as text that a POSIX shell reads back as the same words (run.json, sweep.json).
#include <string>
#include <vector>

namespace tn {

/// `arg` as it is when it holds only [A-Za-z0-9_+=./:,-], else in single quotes (a quote inside
/// written '\'').
std::string shell_quote(const std::string& arg);

/// The words of `argv`, each shell_quote'd, joined by spaces.
std::string shell_command(const std::vector<std::string>& argv);

}  // namespace tn
