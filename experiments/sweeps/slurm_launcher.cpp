#include "experiments/sweeps/slurm_launcher.h"

#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <thread>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "core/platform/process/child_process.h"
#include "experiments/sweeps/slurm_status.h"

namespace tn {
namespace {

namespace fs = std::filesystem;

bool succeeded(const ChildResult& r) { return WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0; }

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

/// Runs a Slurm client command. Throws ConfigError when it is not installed.
ChildResult slurm_command(const std::vector<std::string>& argv) {
  try {
    return run_child(argv, /*capture_stderr=*/true);
  } catch (const std::runtime_error&) {
    throw ConfigError("--launcher slurm: `" + argv[0] +
                      "` not found; it needs Slurm's client commands (Debian: apt-get install slurm-client) and "
                      "a cluster they reach (SLURM_CONF)");
  }
}

/// Whether Slurm's answer says the job is gone (purged after MinJobAge, or never known).
bool unknown_job(const ChildResult& r) { return r.err.find("Invalid job id") != std::string::npos; }

}  // namespace

SlurmLauncher::SlurmLauncher(SlurmOptions options) : options_(std::move(options)) {}

std::vector<std::string> SlurmLauncher::command(const std::vector<std::string>& train_argv) const {
  if (options_.ranks <= 1) return train_argv;
  std::vector<std::string> argv = {"srun", "--mpi=pmix"};
  argv.insert(argv.end(), train_argv.begin(), train_argv.end());
  return argv;
}

std::vector<PointEvent> SlurmLauncher::launch(const std::vector<PointLaunch>& points) {
  std::vector<PointEvent> events;
  if (points.empty()) return events;
  fs::create_directories(options_.folder);
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  const fs::path script = options_.folder / (std::string("array-") + stamp + "-" + std::to_string(::getpid()) + ".sh");
  write_own_file(script.string(), slurm_batch_script(options_, points), "the sweep");
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), options_.sbatch_args.begin(), options_.sbatch_args.end());
  argv.push_back(script.string());
  const ChildResult r = slurm_command(argv);
  std::string job = trimmed(r.out.substr(0, r.out.find(';')));  // "1234" or "1234;cluster"
  if (!succeeded(r) || job.empty() || job.find_first_not_of("0123456789") != std::string::npos) {
    std::string why = trimmed(r.err.empty() ? r.out : r.err);  // sbatch's lines, as one line
    for (size_t at = why.find('\n'); at != std::string::npos; at = why.find('\n', at)) why.replace(at, 1, "; ");
    // No controller or configuration to reach is the machine's failure (exit 1); anything else,
    // such as an invalid partition or option, the --slurm options' (exit 2).
    const bool unreachable = why.find("contact") != std::string::npos ||
                             why.find("onfiguration") != std::string::npos ||
                             why.find("onnection") != std::string::npos || why.find("timed out") != std::string::npos;
    const std::string message = "sbatch refused the job array (" + describe_child_status(r.status) + "): " + why +
                                "; the batch script is " + script.string();
    if (unreachable) throw IoError(message + "; is Slurm running here (sinfo)?");
    throw ConfigError(message + "; check the --slurm options");
  }
  submitted_ = true;
  spdlog::info("sweep {}: submitted {} point(s) as Slurm job array {} ({})", options_.job_name, points.size(), job,
               script.string());
  for (size_t i = 0; i < points.size(); ++i) {
    tasks_.push_back({points[i].point, job, static_cast<int>(i), false});
    PointEvent e;
    e.kind = PointEvent::Kind::Queued;
    e.point = points[i].point;
    e.slurm_job = job;
    e.slurm_task = static_cast<int>(i);
    events.push_back(e);
  }
  return events;
}

bool SlurmLauncher::adopt(size_t point, const std::optional<std::string>& slurm_job, std::optional<int> slurm_task) {
  if (!slurm_job || !slurm_task) return false;
  tasks_.push_back({point, *slurm_job, *slurm_task, false});
  return true;
}

std::set<std::string> SlurmLauncher::active_jobs() const {
  std::set<std::string> jobs;
  for (const Task& t : tasks_) jobs.insert(t.job);
  return jobs;
}

/// Looks at a task whose scontrol answer has no JobState before it is taken as ended.
constexpr int kUnreadableLooks = 3;

void SlurmLauncher::look_at(const std::string& job, std::vector<PointEvent>& events) {
  const ChildResult queue = slurm_command({"squeue", "-h", "-r", "-j", job, "-o", "%K|%T|%N"});
  if (!succeeded(queue) && !unknown_job(queue)) {
    spdlog::warn("sweep {}: squeue failed ({}): {}; asking again in {} s", options_.job_name,
                 describe_child_status(queue.status), trimmed(queue.err), options_.poll_s);
    return;
  }
  const std::vector<SlurmQueuedTask> listed = succeeded(queue) ? parse_squeue_tasks(queue.out) : std::vector<SlurmQueuedTask>{};
  for (size_t i = 0; i < tasks_.size();) {
    Task& t = tasks_[i];
    if (t.job != job) {
      ++i;
      continue;
    }
    PointEvent e;
    e.point = t.point;
    e.slurm_job = t.job;
    e.slurm_task = t.task;
    const auto in_queue = std::find_if(listed.begin(), listed.end(), [&](const SlurmQueuedTask& q) { return q.task == t.task; });
    if (in_queue != listed.end()) {
      if (!t.started && slurm_state_started(in_queue->state)) {
        t.started = true;
        e.kind = PointEvent::Kind::Started;
        events.push_back(e);
      }
      ++i;
      continue;
    }
    const std::string id = t.job + "_" + std::to_string(t.task);
    const ChildResult shown = slurm_command({"scontrol", "show", "job", "-o", id});
    e.kind = PointEvent::Kind::Ended;
    if (succeeded(shown)) {
      const std::optional<SlurmTaskEnd> end = parse_scontrol_end(shown.out);
      t.unreadable = scontrol_has_state(shown.out) ? 0 : t.unreadable + 1;
      if (!end && t.unreadable < kUnreadableLooks) {
        // Left the queue's listing a moment before its end was recorded, or a garbled answer.
        if (t.unreadable > 0)
          spdlog::warn("sweep {}: scontrol show job {} gave no JobState: {}; asking again", options_.job_name, id,
                       trimmed(shown.out).substr(0, 200));
        ++i;
        continue;
      }
      if (end) {
        e.exit_code = end->exit_code;
        e.killed = end->killed;
        e.how = "Slurm: " + end->state;
        e.wall_s = end->run_s;
      } else {  // never a poll without end, which a SIGTERM could not stop: taken as interrupted
        e.killed = true;
        e.how = "Slurm gave no JobState for " + id + " " + std::to_string(kUnreadableLooks) + " times in a row";
      }
    } else if (unknown_job(shown)) {
      e.killed = true;
      e.how = "Slurm no longer knows job " + id + " (it ended longer ago than its MinJobAge)";
    } else {
      spdlog::warn("sweep {}: scontrol show job {} failed: {}; asking again", options_.job_name, id, trimmed(shown.err));
      return;
    }
    events.push_back(e);
    tasks_.erase(tasks_.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

std::vector<PointEvent> SlurmLauncher::poll() {
  std::vector<PointEvent> events;
  if (tasks_.empty()) return events;
  const auto now = std::chrono::steady_clock::now();
  if (now < next_look_) {
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(next_look_ - now, std::chrono::milliseconds(250)));
    return events;
  }
  next_look_ = now + std::chrono::milliseconds(static_cast<int64_t>(options_.poll_s * 1000));
  for (const std::string& job : active_jobs()) look_at(job, events);
  return events;
}

void SlurmLauncher::stop() {
  for (const std::string& job : active_jobs()) {
    slurm_command({"scancel", "--state=PENDING", job});                 // not started: withdrawn
    const ChildResult r = slurm_command({"scancel", "--signal=TERM", "--full", job});  // running: save and exit
    if (!succeeded(r) && !r.err.empty())
      spdlog::warn("sweep {}: scancel --signal=TERM {}: {}", options_.job_name, job, trimmed(r.err));
  }
  next_look_ = {};
}

}  // namespace tn
