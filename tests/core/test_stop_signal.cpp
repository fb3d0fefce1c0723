// Graceful stops (core/platform/process/stop_signal.h): SIGTERM and SIGINT wait, blocked, for the thread
// that takes them; none interrupts a oneDNN kernel, a second one ends the process at once, and
// children start unblocked.
// Each case runs in a forked child, whose signal mask and exit status the parent inspects.
#include <doctest/doctest.h>

#include <pthread.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <thread>
#include <vector>

#include "core/runtime/dnnl/matmul.h"
#include "core/platform/process/child_process.h"
#include "core/platform/process/stop_signal.h"

using namespace tn;

namespace {

/// Runs `body` in a forked child and returns its waitpid status; `body` returns the exit code.
template <typename Body>
int in_child(Body body) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) ::_exit(body());
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

/// The language-model head's three products (logits = hidden · weightᵀ, d hidden = d logits ·
/// weight, d weight = d logitsᵀ · hidden; 128 rows, d_model 32, a vocabulary of 18,226), `repeats`
/// times: oneDNN's f32 GEMM, whose JIT kernel points rsp into the heap, where a signal handler's
/// frame corrupted it when a SIGTERM came mid-training. Returns whether the logits are right.
bool lm_head_products_correct(int repeats) {
  const int64_t m = 128, k = 32, n = 18226;
  std::vector<float> hidden(m * k), weight(n * k), logits(m * n), d_hidden(m * k), d_weight(n * k);
  for (size_t i = 0; i < hidden.size(); ++i) hidden[i] = static_cast<float>(i % 7) * 0.25f - 0.5f;
  for (size_t i = 0; i < weight.size(); ++i) weight[i] = static_cast<float>(i % 5) * 0.125f - 0.25f;
  for (int r = 0; r < repeats; ++r) {
    std::vector<float> churn(1000 + r % 97);  // the heap in use around the kernels, as in a step
    matmul({.m = m, .n = n, .k = k, .trans_b = true}, hidden.data(), weight.data(), logits.data(), nullptr);
    matmul({.m = m, .n = k, .k = n}, logits.data(), weight.data(), d_hidden.data());
    matmul({.m = n, .n = k, .k = m, .trans_a = true}, logits.data(), hidden.data(), d_weight.data());
  }
  for (int64_t i : {int64_t{0}, m / 2, m - 1})
    for (int64_t j : {int64_t{0}, n / 3, n - 1}) {
      double want = 0;  // by hand: the dot product of row i of hidden and row j of weight
      for (int64_t t = 0; t < k; ++t) want += double{hidden[i * k + t]} * weight[j * k + t];
      if (std::abs(logits[i * n + j] - want) > 1e-4) return false;
    }
  return true;
}

}  // namespace

namespace {
/// Waits up to 2 s for the watcher to record a signal; stop_signal() then.
int awaited_stop_signal() {
  for (int i = 0; i < 200 && stop_signal() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return stop_signal();
}
}  // namespace

TEST_CASE("stop signals: SIGTERMs sent throughout oneDNN's f32 GEMMs wait, blocked, and the heap stays intact") {
  // With a handler (sigaction) instead of the mask this child died of "corrupted size vs.
  // prev_size" within the first hundred products.
  const int status = in_child([] {
    block_stop_signals();
    std::atomic<bool> done{false};
    std::thread sender([&] {  // a scheduler insisting: one SIGTERM to the process every 20 µs
      while (!done) {
        ::kill(::getpid(), SIGTERM);
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
    });
    const bool correct = lm_head_products_correct(200);
    done = true;
    sender.join();
    sigset_t pending;
    sigpending(&pending);
    if (!correct) return 3;
    return sigismember(&pending, SIGTERM) ? 0 : 4;  // still waiting, never handled
  });
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("stop signals: a SIGTERM during the GEMMs is taken by the watcher and seen by stop_signal()") {
  const int status = in_child([] {
    install_stop_handlers();
    std::thread sender([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      ::kill(::getpid(), SIGTERM);
    });
    const bool correct = lm_head_products_correct(100);
    sender.join();
    if (!correct) return 3;
    return awaited_stop_signal() == SIGTERM && stop_signal() == SIGTERM ? 0 : 4;  // taken once, then kept
  });
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("stop signals: none is seen before one comes, the first is taken, a second ends the process at once") {
  const int status = in_child([] {
    install_stop_handlers();
    install_stop_handlers();  // idempotent
    if (stop_signal() != 0) return 3;
    ::kill(::getpid(), SIGINT);
    if (awaited_stop_signal() != SIGINT) return 4;
    ::kill(::getpid(), SIGTERM);  // while the work goes on, never polling: the default action
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < std::chrono::seconds(2)) {
    }
    return 5;
  });
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
}

TEST_CASE("stop signals: a SIGINT the parent left ignored is still taken (a shell's background job)") {
  const int status = in_child([] {
    std::signal(SIGINT, SIG_IGN);
    install_stop_handlers();
    ::kill(::getpid(), SIGINT);
    return awaited_stop_signal() == SIGINT ? 0 : 3;
  });
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("stop signals: a child process (run_child) starts with them unblocked, so a scheduler can stop it") {
  const int status = in_child([] {
    install_stop_handlers();
    // The shell stops itself: with SIGTERM blocked it would print "alive" and exit 0.
    const ChildResult r = run_child({"sh", "-c", "kill -TERM $$; sleep 2; echo alive"});
    return WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGTERM && r.out.empty() ? 0 : 3;
  });
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("stop signals: a parent whose threads end one after the other sends PR_SET_PDEATHSIG twice, and that is one stop") {
  // A sweep (whose watcher is a second thread) killed with -9: its point was told twice (the
  // kernel hands the point to the next thread of the dying parent, and signals again), and the
  // second signal ended it at once, without the checkpoint of its stop (6 runs of 8).
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  const int status = in_child([&] {  // the "sweep"
    const pid_t point = ::fork();
    if (point == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      install_stop_handlers();
      const auto start = std::chrono::steady_clock::now();
      while (stop_signal() == 0 && std::chrono::steady_clock::now() - start < std::chrono::seconds(5)) {
      }
      // Stopped once: the work would save now; alive a second later means no second signal ended it.
      std::this_thread::sleep_for(std::chrono::seconds(1));
      const char verdict = stop_signal() == SIGTERM ? 'y' : 'n';
      [[maybe_unused]] const ssize_t w = ::write(pipe_fds[1], &verdict, 1);
      ::_exit(0);
    }
    std::thread([] {  // the parent's second thread, which ends it a moment later
      std::this_thread::sleep_for(std::chrono::milliseconds(600));
      ::_exit(0);
    }).detach();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the point is running
    ::pthread_exit(nullptr);  // the thread that forked the point ends first: one signal, then another
    return 1;
  });
  (void)status;  // how the "sweep" ended does not matter: its point's verdict does
  ::close(pipe_fds[1]);
  char verdict = 0;
  CHECK(::read(pipe_fds[0], &verdict, 1) == 1);  // 0 bytes: the point was killed by the second signal
  ::close(pipe_fds[0]);
  CHECK(verdict == 'y');
}
