#include "core/platform/process/stop_signal.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <cstdio>

namespace tn {
namespace {

std::atomic<int> g_stop{0};

sigset_t stop_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

}  // namespace

void block_stop_signals() {
  const sigset_t set = stop_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void unblock_stop_signals() {
  const sigset_t set = stop_set();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

namespace {

/// The parent when install_stop_handlers ran.
std::atomic<pid_t> g_parent{0};

/// Whether `info` is the parent's death told again: PR_SET_PDEATHSIG (a sweep's points) sends the
/// signal each time a thread of the dying parent exits (the child is handed to the next thread
/// first), from the parent's pid, so a parent with a watcher thread of its own sends it twice.
bool parent_death_again(const siginfo_t& info) {
  const pid_t parent = g_parent.load();
  return parent > 1 && info.si_pid == parent && ::getppid() != parent;
}

/// The watcher: takes SIGTERM and SIGINT as they come (sigwaitinfo, on a thread that runs nothing
/// else), records the first for stop_signal(), and ends the process on the second with that
/// signal's default action, as a second Ctrl-C would.
void watch_stop_signals() {
  const sigset_t set = stop_set();
  for (;;) {
    siginfo_t info{};
    const int signal = sigwaitinfo(&set, &info);
    if (signal <= 0) continue;
    int expected = 0;
    if (g_stop.compare_exchange_strong(expected, signal)) continue;  // the first: the work stops itself
    if (parent_death_again(info)) continue;
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, signal);
    pthread_sigmask(SIG_UNBLOCK, &one, nullptr);  // the action is the default (install_stop_handlers)
    ::raise(signal);                               // the user insists: ends the process here
  }
}

}  // namespace

void install_stop_handlers() {
  block_stop_signals();  // first: from here on a signal only waits, in every thread made later
  // The default action, even where the parent left one ignored (a shell's background job ignores
  // SIGINT): the watcher then takes it, and its second one ends the process.
  struct sigaction action{};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  static std::once_flag started;
  std::call_once(started, [] {
    g_parent = ::getppid();
    std::thread(watch_stop_signals).detach();
  });
}

int stop_signal() { return g_stop.load(); }

sigset_t child_signal_mask() {
  sigset_t mask;
  pthread_sigmask(SIG_SETMASK, nullptr, &mask);
  sigdelset(&mask, SIGTERM);
  sigdelset(&mask, SIGINT);
  return mask;
}

const char* signal_name(int signal) {
  switch (signal) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    default: {
      static thread_local char buf[32];
      std::snprintf(buf, sizeof buf, "signal %d", signal);
      return buf;
    }
  }
}

}  // namespace tn
