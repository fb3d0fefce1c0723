#pragma once
// Graceful stops: SIGTERM (a cluster scheduler about to preempt a job, `kill`) and SIGINT (Ctrl-C)
// are recorded instead of ending the process, so a long job can finish its current unit of work,
// save, and exit with 128 + the signal (143, 130), as shells and schedulers expect. A second
// signal of either kind ends the process at once.
//
// No handler runs: the two signals are blocked in every thread, and one thread that runs nothing
// else takes them (sigwait). A handler's frame is pushed below the interrupted thread's stack
// pointer, and oneDNN's JIT f32 GEMM kernels (x64, AVX2 and AVX-512, up to v3.11) point rsp into a
// heap buffer while they run: a signal handled there corrupts the heap (oneDNN issue 4845, fixed
// by its pull request 4855).
#include <csignal>

namespace tn {

/// Blocks SIGTERM and SIGINT in the calling thread and in the threads it creates from then on.
void block_stop_signals();

/// Unblocks SIGTERM and SIGINT in the calling thread only. `main` blocks them, starts MPI (whose
/// threads inherit the mask), then unblocks them in itself: a signal then always reaches the main
/// thread, which ends the process (the default) or, after install_stop_handlers, keeps it for
/// stop_signal(). A helper thread with the two unblocked would end the process on a stop.
void unblock_stop_signals();

/// Blocks SIGTERM and SIGINT in the calling thread and in every thread it creates later (call it
/// before the work starts its threads: OpenMP's team), sets their action to the default, and
/// starts the thread that takes them: the first is recorded for stop_signal(), the second ends
/// the process at once with its default action. Idempotent.
void install_stop_handlers();

/// The first SIGTERM or SIGINT received since install_stop_handlers, 0 when none. Cheap (an
/// atomic load): poll it after every unit of work.
int stop_signal();

/// The signal mask a child process should start with: the parent's, without the two stop signals
/// (a blocked signal stays blocked across exec). For posix_spawn's POSIX_SPAWN_SETSIGMASK, or
/// sigprocmask in a forked child before exec.
sigset_t child_signal_mask();

/// The exit code of a process that stopped for `signal`: 128 + signal (SIGTERM 143, SIGINT 130).
inline int exit_code_for_signal(int signal) { return 128 + signal; }

/// "SIGTERM", "SIGINT", else "signal N".
const char* signal_name(int signal);

}  // namespace tn
