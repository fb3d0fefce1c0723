#pragma once
// CLI11's parse errors in a user's words where its own text misleads: "--threads: Value abc not in
// range 0 to 1024" for a value that is not a number at all, and Hydra's `key=value` overrides
// refused as arguments "not expected".
#include <string>

namespace tn::app {

/// `message` (a CLI::ParseError's what()) with a range check's text on a value that is not a number
/// rewritten as "--threads: abc is not a number; give a whole number from 0 to 1024" (or "a
/// number" when a bound has a fraction), and on a fraction where whole numbers are asked as "'1.5' is
/// not a whole number; give a whole number from 1 to 86400"; an unexpected argument written as Hydra writes an override
/// (`train.max_steps=5`, `+key=v`, `key=a,b` for a multirun) followed by the --set (or, for a list,
/// --grid) that says it here (for a list given to a verb other than `sweep`, the sweep command
/// that varies it); any other message unchanged.
std::string cli_error_text(const std::string& message, const std::string& verb = "");

}  // namespace tn::app
