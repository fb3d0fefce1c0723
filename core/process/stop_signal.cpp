#include "core/process/stop_signal.h"

#include <pthread.h>

#include <atomic>
#include <cstdio>
#include <ctime>

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

void install_stop_handlers() {
  block_stop_signals();  // first: from here on a signal only waits
  // The default action, even where the parent left one ignored (a shell's background job ignores
  // SIGINT): a blocked signal is then kept pending, and once unblocked the second one ends us.
  struct sigaction action{};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

int stop_signal() {
  if (const int seen = g_stop.load()) return seen;
  const sigset_t set = stop_set();
  const timespec now{0, 0};
  const int signal = sigtimedwait(&set, nullptr, &now);  // a pending one (process or thread), taken
  if (signal <= 0) return 0;
  int expected = 0;
  g_stop.compare_exchange_strong(expected, signal);
  unblock_stop_signals();  // the user insists: the next one ends the process
  return g_stop.load();
}

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
