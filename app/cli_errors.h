#pragma once
// CLI11's parse errors in a user's words where its own text misleads: "--threads: Value abc not in
// range 0 to 1024" for a value that is not a number at all, and Hydra's `key=value` overrides
// refused as arguments "not expected".
#include <string>
#include <vector>

namespace tn::app {

/// The verb a command line named, as cli_error_text needs it.
struct CliVerb {
  std::string name;                  // "train"; "" when none was named
  bool takes_set = true;             // whether it has --set (spec overrides)
  std::vector<std::string> options;  // its long option names, without dashes
};

/// `message` (a CLI::ParseError's what()) in a user's words where CLI11's mislead:
/// - a range check on a value that is not a number: "--threads: 'abc' is not a number; give a
///   whole number from 0 to 1024" (or "a number" when a bound has a fraction); on a fraction where
///   whole numbers are asked: "'1.5' is not a whole number; give a whole number from 1 to 86400";
/// - arguments written as Hydra writes overrides (`train.max_steps=5`, `+key=v`, `key=a,b`, with
///   `-m`/`--multirun`): the --set (a list: --grid) that says them here; for a list or -m given to a
///   verb other than `sweep`, the sweep command that varies it; for a verb without --set, its
///   options that match the keys (`split=test` to eval: --split test).
/// - flags of fairseq or Lightning (--max_steps 5, --seed, --lr, --batch-size, --fast_dev_run) and
///   Hydra's --config-name: the --set, --smoke or argument that does it here, the words in the
///   order typed;
/// - an option given twice where it takes one value: "--threads is given 2 times; give it once".
/// Any other message unchanged.
std::string cli_error_text(const std::string& message, const CliVerb& verb = {});

}  // namespace tn::app
