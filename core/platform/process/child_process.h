#pragma once
// Running a child process to completion: its stdout captured through a pipe, its stderr
// inherited, and its resources as the kernel counts them (wait4), so a measurement can take the
// peak memory of a fresh process (bench's scaling points and its model table, the PyTorch
// reference's train-bench).
#include <string>
#include <vector>

namespace tn {

struct ChildResult {
  int status = 0;          // as waitpid reports it
  std::string out;         // everything written to stdout
  double max_rss_mb = 0;   // the child's peak resident set (ru_maxrss), MiB
  std::string err;         // everything written to stderr, when run_child was asked to capture it
};

/// How spawn_child starts a child: the descriptors its stdout and stderr become (-1: inherited),
/// and whether it leads a process group of its own (so a stop signal can reach all it starts).
struct SpawnOptions {
  int stdout_fd = -1;
  int stderr_fd = -1;
  bool own_group = false;
};

/// Starts argv (argv[0] searched in PATH when it has no '/') without this process's blocked stop
/// signals (core/platform/process/stop_signal.h), so it stays stoppable; returns its pid without waiting.
/// Throws std::runtime_error naming argv[0] when it cannot be started.
int spawn_child(const std::vector<std::string>& argv, const SpawnOptions& options = {});

/// Runs argv (argv[0] searched in PATH when it has no '/') and waits for it; its stderr is
/// inherited, or captured into ChildResult::err with capture_stderr (a scheduler's command whose
/// message goes into this program's own error). Throws std::runtime_error naming argv[0] when it
/// cannot be started.
ChildResult run_child(const std::vector<std::string>& argv, bool capture_stderr = false);

/// "exit code N", or "killed by signal S" (with "(out of memory?)" for SIGKILL).
std::string describe_child_status(int status);

}  // namespace tn
