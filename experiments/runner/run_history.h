#pragma once
// run.json: how a run was started, one entry per session (the first start, then each --resume):
//   {"sessions": [{"command", "overrides", "version", "host", "threads", "ranks", "launcher",
//                  "kernel_isa", "started", "ended", "outcome"}]}
// `command` is the command line as given, `overrides` the --set values, `version` the program's
// (core/platform/version.h), `threads` per rank, `ranks` the data-parallel processes, `launcher` how they
// were started ({"name": "direct" | "mpirun" | "slurm"}, with Slurm's job and array task ids),
// times are UTC ISO 8601, `outcome` is running, done, diverged, stopped or failed.
// Written atomically at the start and the end of every session.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tn {

/// What the caller knows of how the run was started (RunOptions).
struct RunInvocation {
  std::string command;                 // "transnormer train spec.yaml --set ..." ("" from a library call)
  std::vector<std::string> overrides;  // the --set values, as given
};

class RunHistory {
 public:
  /// Starts a session in `dir`: keeps the sessions of DIR/run.json when `resume` (a malformed file
  /// is replaced, with a warning), appends this one as running, and writes the file.
  RunHistory(std::string dir, const RunInvocation& invocation, int threads, int ranks, bool resume);
  /// Ends this session: its end time and outcome (done, diverged, stopped, failed); writes the file.
  void finish(const std::string& outcome);
  /// Takes this session back out (a resume refused before it trained: the run's record stays as it
  /// was); writes the file.
  void withdraw();

 private:
  std::string path_;
  nlohmann::json doc_;
};

}  // namespace tn
