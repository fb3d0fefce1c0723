#include "core/platform/process/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>

#include "core/platform/process/stop_signal.h"

extern char** environ;

namespace tn {

namespace {

/// Reads `fds` (stdout first, stderr second when there) until both reach their end.
void drain(int out_fd, int err_fd, ChildResult& result) {
  struct pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  const nfds_t count = err_fd >= 0 ? 2 : 1;
  char buf[4096];
  for (;;) {
    bool open_left = false;
    for (nfds_t i = 0; i < count; ++i) open_left |= fds[i].fd >= 0;
    if (!open_left) return;
    if (poll(fds, count, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    for (nfds_t i = 0; i < count; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        sinks[i]->append(buf, static_cast<size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
      }
    }
  }
}

}  // namespace

int spawn_child(const std::vector<std::string>& argv, const SpawnOptions& options) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (options.stdout_fd >= 0) posix_spawn_file_actions_adddup2(&actions, options.stdout_fd, STDOUT_FILENO);
  if (options.stderr_fd >= 0) posix_spawn_file_actions_adddup2(&actions, options.stderr_fd, STDERR_FILENO);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The child starts without this process's blocked stop signals: a scheduler's scancel, a
  // reference run or a download must still be stoppable.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  const sigset_t mask = child_signal_mask();
  posix_spawnattr_setsigmask(&attr, &mask);
  short flags = POSIX_SPAWN_SETSIGMASK;
  if (options.own_group) {
    posix_spawnattr_setpgroup(&attr, 0);
    flags |= POSIX_SPAWN_SETPGROUP;
  }
  posix_spawnattr_setflags(&attr, flags);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0].c_str(), &actions, &attr, args.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

ChildResult run_child(const std::vector<std::string>& argv, bool capture_stderr) {
  int out[2], err[2] = {-1, -1};
  if (pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  if (capture_stderr && pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  pid_t pid = 0;
  std::string failed;
  try {
    pid = spawn_child(argv, {out[1], capture_stderr ? err[1] : -1, false});
  } catch (const std::runtime_error& e) {
    failed = e.what();
  }
  close(out[1]);
  if (capture_stderr) close(err[1]);
  if (!failed.empty()) {
    close(out[0]);
    if (capture_stderr) close(err[0]);
    throw std::runtime_error(failed);
  }
  ChildResult result;
  drain(out[0], err[0], result);
  struct rusage usage {};
  while (wait4(pid, &result.status, 0, &usage) < 0 && errno == EINTR) {
  }
  result.max_rss_mb = static_cast<double>(usage.ru_maxrss) / 1024.0;
  return result;
}

std::string describe_child_status(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "killed by signal " + std::to_string(sig) + (sig == SIGKILL ? " (out of memory?)" : "");
  }
  return "exit code " + std::to_string(WEXITSTATUS(status));
}

}  // namespace tn
