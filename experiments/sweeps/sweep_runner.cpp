#include "experiments/sweeps/sweep_runner.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>

#include "core/error.h"
#include "core/process/shell_quote.h"
#include "experiments/runner/run_dir.h"
#include "experiments/runner/train_log.h"
#include "experiments/runner/train_state.h"

namespace tn {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::ordered_json;
namespace fs = std::filesystem;

constexpr const char* kIndexFile = "sweep.json";
constexpr const char* kLogFile = "train.log";

/// What identifies a point's experiment: its resolved spec without train.threads (which
/// --threads-per-job sets, and which a resume may change).
ordered_json spec_identity(const ExperimentSpec& spec) {
  ordered_json j = spec_to_json(spec);
  j["train"].erase("threads");
  return j;
}

/// A point's recorded identity as this version resolves it: the index of an older version holds the
/// spec in that version's resolved form (a key added since, with its default, is absent; a value
/// written another way, such as `task`, which is now a mapping with the task's options), so it is
/// read back through the spec resolver and written again. The record as it stands when it no
/// longer resolves (the comparison then names the difference).
ordered_json current_identity(const ordered_json& recorded) {
  if (!recorded.is_object()) return recorded;
  try {
    const YamlDocument doc{nlohmann::json::parse(recorded.dump()), KeyLocations(kIndexFile)};
    return spec_identity(resolve_spec_document(doc));
  } catch (const std::exception&) {
    return recorded;
  }
}

/// Whether `identity` is the point that ran with only train.max_steps raised: the run then
/// continues (train --resume allows a higher max_steps) instead of being refused as changed.
bool raised_max_steps(const ordered_json& identity, const PointRecord& ran) {
  if (!ran.spec.is_object() || !ran.spec.contains("train") || !identity.contains("train")) return false;
  const ordered_json& was = ran.spec["train"]["max_steps"];
  const ordered_json& now = identity["train"]["max_steps"];
  if (!was.is_number_integer() || !now.is_number_integer() || now.get<int64_t>() <= was.get<int64_t>()) return false;
  ordered_json same = ran.spec;
  same["train"]["max_steps"] = now;
  return same == identity;
}

/// The first key path where `a` and `b` differ, with both values as JSON text.
bool first_difference(const ordered_json& a, const ordered_json& b, const std::string& path, std::string& out) {
  if (a.is_object() && b.is_object()) {
    for (const auto& [key, value] : a.items()) {
      const std::string p = path.empty() ? key : path + "." + key;
      if (!b.contains(key)) {
        out = p + " is " + value.dump() + " in the sweep file, absent in the index";
        return true;
      }
      if (first_difference(value, b[key], p, out)) return true;
    }
    for (const auto& [key, value] : b.items())
      if (!a.contains(key)) {
        out = (path.empty() ? key : path + "." + key) + " is absent in the sweep file, " + value.dump() + " in the index";
        return true;
      }
    return false;
  }
  if (a == b) return false;
  out = path + " is " + a.dump() + " in the sweep file but " + b.dump() + " in the sweep that ran";
  return true;
}

ordered_json overrides_json(const std::vector<SpecOverride>& overrides) {
  ordered_json out = ordered_json::object();
  for (const SpecOverride& o : overrides) out[o.key] = o.value;
  return out;
}

/// The child's command line: `transnormer train BASE --set ... --out DIR --threads T --resume|--overwrite`:
/// a point that does not resume starts afresh in its folder, which belongs to the sweep (a point
/// killed before its first checkpoint, a diverged one) and may hold that earlier attempt.
std::vector<std::string> train_command(const SweepSpec& sweep, const SweepPoint& point, const SweepOptions& options,
                                       bool resume) {
  std::vector<std::string> argv = {options.binary, "train", point.base};
  for (const SpecOverride& o : sweep.set) argv.insert(argv.end(), {"--set", o.assignment()});
  for (const SpecOverride& o : point.overrides) argv.insert(argv.end(), {"--set", o.assignment()});
  argv.insert(argv.end(), {"--out", (fs::path(options.out_dir) / point.dir).string(), "--threads",
                           std::to_string(options.threads_per_job)});
  if (!options.data_root.empty()) argv.insert(argv.end(), {"--data-root", options.data_root});
  argv.push_back(resume ? "--resume" : "--overwrite");
  return argv;
}

/// Whether a run directory holds a checkpoint that `train --resume` can continue.
bool resumable(const fs::path& dir) {
  return fs::exists(dir / "config.yaml") && fs::exists(dir / "checkpoint.safetensors") &&
         (fs::exists(dir / kTrainStateFile) || fs::exists(dir / kPreviousTrainStateFile));
}

/// The last "error" line of a point's log without its time stamp, else its last line.
std::string last_error_line(const fs::path& log) {
  std::ifstream in(log);
  std::string line, last, error;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    last = line;
    if (line.find("] error ") != std::string::npos) error = line;
  }
  // "[12:00:00] error message" -> "message"
  std::string pick = error.empty() ? last : error;
  if (const size_t at = pick.find("] "); pick[0] == '[' && at != std::string::npos) {
    pick = pick.substr(at + 2);
    if (const size_t space = pick.find(' '); space != std::string::npos) pick = pick.substr(space + 1);
  }
  return pick;
}

/// Starts `argv` with stdout and stderr appended to `log`, in a process group of its own (a
/// Ctrl-C in the terminal reaches the sweep only, which forwards one SIGTERM). Throws IoError.
pid_t spawn(const std::vector<std::string>& argv, const fs::path& log) {
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError(log.string() + ": cannot open the point's log: " + std::strerror(errno));
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fd);
    throw IoError(std::string("cannot start a point: fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    const int null_in = ::open("/dev/null", O_RDONLY);
    if (null_in >= 0) ::dup2(null_in, 0);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::execv(args[0], args.data());
    const char* msg = "transnormer sweep: cannot execute the point's command\n";
    [[maybe_unused]] ssize_t w = ::write(2, msg, std::strlen(msg));
    ::_exit(127);
  }
  ::close(fd);
  return pid;
}

/// One running point.
struct Child {
  size_t point;  // index into sweep.points
  Clock::time_point start;
};

class SweepRun {
 public:
  SweepRun(const SweepSpec& sweep, const SweepOptions& options)
      : sweep_(sweep), options_(options), index_(reconcile_index(sweep, options.out_dir)) {}
  SweepOutcome run();

 private:
  PointRecord& record(size_t point) { return *index_.find(sweep_.points[point].dir); }
  void save() const { write_sweep_index((fs::path(options_.out_dir) / kIndexFile).string(), index_); }
  void launch(size_t point);
  void finish(pid_t pid, int status);
  void stop_children(int signal);
  void log_progress(const std::string& event) const;

  const SweepSpec& sweep_;
  SweepOptions options_;
  SweepIndex index_;
  std::deque<size_t> queue_;
  std::map<pid_t, Child> running_;
  std::vector<double> finished_s_;  // wall times of the points finished in this session
  int stop_signal_ = 0;
};

void SweepRun::launch(size_t point) {
  const SweepPoint& p = sweep_.points[point];
  PointRecord& r = record(point);
  const fs::path dir = fs::path(options_.out_dir) / p.dir;
  fs::create_directories(dir);
  // A diverged point starts afresh (its last checkpoint leads to the same divergence); any other
  // point with a checkpoint continues from it.
  const bool resume = r.state != PointState::Diverged && resumable(dir);
  fs::remove(dir / kDivergedFile);
  const std::vector<std::string> argv = train_command(sweep_, p, options_, resume);
  std::string command;
  for (const std::string& a : argv) command += (command.empty() ? "" : " ") + shell_quote(a);
  {
    std::ofstream log(dir / kLogFile, std::ios::app);
    log << "# transnormer sweep " << sweep_.name << ": " << command << "\n";
  }
  const pid_t pid = spawn(argv, dir / kLogFile);
  running_[pid] = {point, Clock::now()};
  r.command = command;
  r.pid = pid;
  r.jobs = options_.jobs;
  r.threads = options_.threads_per_job;
  r.state = PointState::Running;
  r.exit_code.reset();
  r.error.clear();
  save();
  log_progress(std::string(resume ? "resuming " : "started ") + p.name + " in " + dir.string());
}

void SweepRun::finish(pid_t pid, int status) {
  const Child child = running_.at(pid);
  running_.erase(pid);
  const SweepPoint& p = sweep_.points[child.point];
  PointRecord& r = record(child.point);
  const fs::path dir = fs::path(options_.out_dir) / p.dir;
  const double wall = std::chrono::duration<double>(Clock::now() - child.start).count();
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.exit_code = code;
  r.wall_s = wall;
  r.pid.reset();
  std::string event;
  if (code == 0 && fs::exists(dir / "summary.json")) {
    r.state = PointState::Done;
    r.error.clear();
    finished_s_.push_back(wall);
    event = p.name + " done in " + format_duration(wall);
  } else if (code == 143 || code == 130 || WIFSIGNALED(status)) {
    // Stopped (by this sweep, a scheduler or the OOM killer), not failed: the next run resumes it
    // from its last checkpoint.
    r.state = PointState::Pending;
    r.error = WIFSIGNALED(status) ? std::string("killed by ") + strsignal(WTERMSIG(status))
                                  : last_error_line(dir / kLogFile);
    event = p.name + " interrupted (exit " + std::to_string(code) + "); a rerun resumes it";
  } else {
    r.state = code == 1 && fs::exists(dir / kDivergedFile) ? PointState::Diverged : PointState::Failed;
    r.error = last_error_line(dir / kLogFile);
    finished_s_.push_back(wall);
    event = p.name + " " + to_string(r.state) + " (exit " + std::to_string(code) + "): " + r.error;
  }
  save();
  log_progress(event);
}

void SweepRun::stop_children(int signal) {
  stop_signal_ = signal;
  queue_.clear();
  spdlog::warn("sweep: {} received: stopping {} running point(s); each saves a checkpoint first", strsignal(signal),
               running_.size());
  for (const auto& [pid, child] : running_) ::kill(pid, SIGTERM);
}

void SweepRun::log_progress(const std::string& event) const {
  int done = 0, failed = 0;
  for (const SweepPoint& p : sweep_.points) {
    const PointState s = index_.find(p.dir)->state;
    done += s == PointState::Done;
    failed += s == PointState::Failed || s == PointState::Diverged;
  }
  std::string eta = "ETA after the first point";
  if (!finished_s_.empty()) {
    double mean = 0;
    for (double s : finished_s_) mean += s;
    mean /= static_cast<double>(finished_s_.size());
    const double left = static_cast<double>(queue_.size()) + 0.5 * static_cast<double>(running_.size());
    eta = "ETA " + format_duration(mean * left / options_.jobs);
  }
  spdlog::info("sweep {}: {} | {} done, {} failed, {} running, {} left | {}", sweep_.name, event, done, failed,
               running_.size(), queue_.size(), eta);
}

SweepOutcome SweepRun::run() {
  fs::create_directories(options_.out_dir);
  for (size_t i = 0; i < sweep_.points.size(); ++i) {
    PointRecord& r = record(i);
    const bool finished = r.state == PointState::Done && fs::exists(fs::path(options_.out_dir) / r.dir / "summary.json");
    const bool failed = r.state == PointState::Failed || r.state == PointState::Diverged;
    if (finished || (failed && !options_.retry_failed)) continue;
    if (r.state == PointState::Done) r.state = PointState::Pending;  // its summary is gone: run it again
    queue_.push_back(i);
  }
  save();
  spdlog::info("sweep {}: {} points, {} to run, {} at a time with {} thread(s) each; index {}", sweep_.name,
               sweep_.points.size(), queue_.size(), options_.jobs, options_.threads_per_job,
               (fs::path(options_.out_dir) / kIndexFile).string());
  while (!queue_.empty() || !running_.empty()) {
    if (!stop_signal_ && options_.stop_requested)
      if (const int signal = options_.stop_requested()) stop_children(signal);
    while (!stop_signal_ && static_cast<int>(running_.size()) < options_.jobs && !queue_.empty()) {
      const size_t next = queue_.front();
      queue_.pop_front();
      launch(next);
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0 && running_.count(pid)) {
      finish(pid, status);
    } else if (pid == 0 || (pid < 0 && errno == EINTR)) {
      ::usleep(50 * 1000);
    } else if (pid < 0) {
      break;  // no children left (ECHILD): nothing to wait for
    }
  }
  SweepOutcome outcome;
  outcome.stop_signal = stop_signal_;
  for (const SweepPoint& p : sweep_.points) {
    switch (index_.find(p.dir)->state) {
      case PointState::Done: ++outcome.done; break;
      case PointState::Failed: ++outcome.failed; break;
      case PointState::Diverged: ++outcome.diverged; break;
      case PointState::Pending:
      case PointState::Running: ++outcome.pending; break;
    }
  }
  spdlog::info("sweep {}: {} done, {} failed, {} diverged, {} pending; index {}", sweep_.name, outcome.done,
               outcome.failed, outcome.diverged, outcome.pending, (fs::path(options_.out_dir) / kIndexFile).string());
  return outcome;
}

}  // namespace

int SweepOutcome::exit_code() const {
  if (stop_signal) return 128 + stop_signal;
  return failed + diverged + pending == 0 ? 0 : 1;
}

SweepIndex reconcile_index(const SweepSpec& sweep, const std::string& out_dir) {
  const fs::path path = fs::path(out_dir) / kIndexFile;
  SweepIndex index;
  if (fs::exists(path)) index = read_sweep_index(path.string());
  index.name = sweep.name;
  index.sweep_file = sweep.path;
  index.base = sweep.base;
  index.set = overrides_json(sweep.set);
  index.axes = sweep.axes;
  for (const SweepPoint& p : sweep.points) {
    const ordered_json identity = spec_identity(p.spec);
    if (PointRecord* r = index.find(p.dir)) {
      std::string difference;
      r->spec = current_identity(r->spec);
      if (raised_max_steps(identity, *r)) {
        spdlog::info("sweep {}: {} continues to train.max_steps {}", sweep.name, p.name,
                     identity["train"]["max_steps"].dump());
        r->spec = identity;
        if (r->state == PointState::Done) r->state = PointState::Pending;  // its run resumes from its checkpoint
      }
      if (first_difference(identity, r->spec, "", difference))
        throw ConfigError(sweep.path + ": point `" + p.name + "` (" + (fs::path(out_dir) / p.dir).string() +
                          ") differs from the one that ran: " + difference +
                          "; restore the sweep file, or give the changed sweep another --out (or name)");
      r->name = p.name;
      r->overrides = overrides_json(p.overrides);
      continue;
    }
    PointRecord r;
    r.name = p.name;
    r.dir = p.dir;
    r.overrides = overrides_json(p.overrides);
    r.spec = identity;
    index.points.push_back(std::move(r));
  }
  return index;
}

SweepOutcome run_sweep(const SweepSpec& sweep, const SweepOptions& options) {
  SweepRun run(sweep, options);
  return run.run();
}

std::string describe_sweep(const SweepSpec& sweep, const std::string& out_dir) {
  const SweepIndex index = reconcile_index(sweep, out_dir);
  std::string out = "sweep " + sweep.name + ": " + std::to_string(sweep.points.size()) + " points from " +
                    (sweep.base.empty() ? std::string("their own bases") : sweep.base) + " into " + out_dir + "\n";
  for (const SweepPoint& p : sweep.points) {
    const PointState state = index.find(p.dir)->state;
    std::string overrides;
    if (p.base != sweep.base) overrides += " (from " + p.base + ")";
    for (const SpecOverride& o : p.overrides) overrides += " " + o.assignment();
    out += fmt::format("{:<9} {:<40} {}\n", to_string(state), p.dir, overrides.empty() ? " (the base as it is)" : overrides);
  }
  if (!sweep.set.empty()) {
    out += "every point also sets:";
    for (const SpecOverride& o : sweep.set) out += " " + o.assignment();
    out += "\n";
  }
  return out;
}

}  // namespace tn
