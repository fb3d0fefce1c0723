#pragma once
// Graceful stops: SIGTERM (a cluster scheduler about to preempt a job, `kill`) and SIGINT (Ctrl-C)
// are recorded instead of ending the process, so a long job can finish its current unit of work,
// save, and exit with 128 + the signal (143, 130), as shells and schedulers expect. A second
// signal of either kind ends the process at once (the default action is restored on the first).
#include <csignal>

namespace tn {

/// Installs the SIGTERM and SIGINT handlers (idempotent). Async-signal-safe: the handler only
/// stores the signal number and restores the default action.
void install_stop_handlers();

/// The signal received since install_stop_handlers (SIGTERM or SIGINT), 0 when none.
int stop_signal();

/// The exit code of a process that stopped for `signal`: 128 + signal (SIGTERM 143, SIGINT 130).
inline int exit_code_for_signal(int signal) { return 128 + signal; }

/// "SIGTERM", "SIGINT", else "signal N".
const char* signal_name(int signal);

}  // namespace tn
