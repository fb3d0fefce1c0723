#pragma once
// Reading run.json (experiments/runner/run_history.h writes it): how its last session ended and
// the command that started it, for the verbs and reports that say what a run folder holds.
#include <string>

namespace tn {

struct LastSession {
  std::string outcome;  // running, done, diverged, stopped or failed; "" when run.json is absent or unreadable
  std::string command;  // the command line as given
  /// Whether that command was a smoke test (train --smoke: records only, no checkpoint).
  bool smoke() const { return command.find(" --smoke") != std::string::npos; }
};

/// The last session of DIR/run.json; empty fields when there is none or it cannot be read.
LastSession last_session(const std::string& dir);

}  // namespace tn
