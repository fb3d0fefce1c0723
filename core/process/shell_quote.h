#pragma once
// Command lines as text that a POSIX shell reads back as the same words (run.json, sweep.json).
#include <string>

namespace tn {

/// `arg` as it is when it holds only [A-Za-z0-9_+=./:,-], else in single quotes (a quote inside
/// written '\'').
std::string shell_quote(const std::string& arg);

}  // namespace tn
