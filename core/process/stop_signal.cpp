#include "core/process/stop_signal.h"

#include <cstdio>

namespace tn {
namespace {

volatile std::sig_atomic_t g_stop = 0;

extern "C" void on_stop_signal(int signal) {
  g_stop = signal;
  std::signal(signal, SIG_DFL);  // a second one ends the process: the user insists
}

}  // namespace

void install_stop_handlers() {
  struct sigaction action{};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // reads and writes in progress go on
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

int stop_signal() { return g_stop; }

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
