#include "experiments/sweeps/local_launcher.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "core/platform/process/stop_signal.h"

namespace tn {
namespace {

/// Whether `path` names the executable this process runs, also after that file was rebuilt or
/// deleted (the kernel then reports "PATH (deleted)").
bool is_own_executable(const std::string& path) {
  std::error_code ec;
  std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  const std::string deleted = " (deleted)";
  if (self.size() > deleted.size() && self.compare(self.size() - deleted.size(), deleted.size(), deleted) == 0)
    self.resize(self.size() - deleted.size());
  return !ec && path == self;
}

/// Starts `argv` (argv[0] searched in PATH) with stdout and stderr appended to `log`, in a process
/// group of its own, sent SIGTERM when the sweep's process ends. A point run by this very binary
/// executes the sweep's own image (/proc/self/exe), so a rebuild during a sweep neither breaks nor
/// mixes its points. Throws IoError.
pid_t spawn(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError(log.string() + ": cannot open the point's log: " + std::strerror(errno));
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const char* file = is_own_executable(argv[0]) ? "/proc/self/exe" : args[0];
  const pid_t parent = ::getpid();
  const sigset_t mask = child_signal_mask();  // the sweep's stop signals are blocked; not the point's
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fd);
    throw IoError(std::string("cannot start a point: fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::sigprocmask(SIG_SETMASK, &mask, nullptr);
    // A sweep that dies (kill -9 included) stops its points as a SIGTERM would: each saves a
    // checkpoint and exits, instead of training on beside the sweep's rerun.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(143);  // the sweep died before the line above

    const int null_in = ::open("/dev/null", O_RDONLY);
    if (null_in >= 0) ::dup2(null_in, 0);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::execvp(file, args.data());
    const std::string msg = "transnormer sweep: cannot execute " + argv[0] + ": " + std::strerror(errno) + "\n";
    [[maybe_unused]] ssize_t w = ::write(2, msg.data(), msg.size());
    ::_exit(127);
  }
  ::close(fd);
  return pid;
}

}  // namespace

LocalLauncher::LocalLauncher(int jobs, int ranks) : jobs_(jobs), ranks_(ranks) {}

std::vector<std::string> LocalLauncher::command(const std::vector<std::string>& train_argv) const {
  if (ranks_ <= 1) return train_argv;
  std::vector<std::string> argv = {"mpirun", "-np", std::to_string(ranks_), "--bind-to", "none"};
  if (::geteuid() == 0) argv.push_back("--allow-run-as-root");  // Open MPI refuses root without it
  argv.insert(argv.end(), train_argv.begin(), train_argv.end());
  return argv;
}

size_t LocalLauncher::free_slots() const {
  return running_.size() >= static_cast<size_t>(jobs_) ? 0 : static_cast<size_t>(jobs_) - running_.size();
}

std::vector<PointEvent> LocalLauncher::launch(const std::vector<PointLaunch>& points) {
  std::vector<PointEvent> events;
  for (const PointLaunch& p : points) {
    const pid_t pid = spawn(p.argv, p.log);
    running_[pid] = {p.point, std::chrono::steady_clock::now()};
    PointEvent e;
    e.kind = PointEvent::Kind::Started;
    e.point = p.point;
    e.pid = pid;
    events.push_back(e);
  }
  return events;
}

std::vector<PointEvent> LocalLauncher::poll() {
  std::vector<PointEvent> events;
  for (;;) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      const auto it = running_.find(pid);
      if (it == running_.end()) continue;  // not a point (cannot happen: the sweep has no other children)
      PointEvent e;
      e.kind = PointEvent::Kind::Ended;
      e.point = it->second.point;
      e.pid = pid;
      e.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - it->second.start).count();
      if (WIFSIGNALED(status)) {
        e.exit_code = 128 + WTERMSIG(status);
        e.killed = true;
        e.how = std::string("killed by ") + strsignal(WTERMSIG(status));
      } else {
        e.exit_code = WEXITSTATUS(status);
      }
      running_.erase(it);
      events.push_back(e);
      continue;
    }
    if (pid < 0 && errno == EINTR) continue;
    break;  // 0: children still running; ECHILD: none left
  }
  if (events.empty() && !running_.empty()) ::usleep(50 * 1000);
  return events;
}

void LocalLauncher::stop() {
  for (const auto& [pid, child] : running_) ::kill(pid, SIGTERM);
}

}  // namespace tn
