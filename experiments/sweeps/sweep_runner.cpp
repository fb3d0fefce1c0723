#include "experiments/sweeps/sweep_runner.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <stdexcept>

#include "core/error.h"
#include "core/platform/io/dir_lock.h"
#include "core/platform/io/own_files.h"
#include "core/platform/process/shell_quote.h"
#include "experiments/sweeps/local_launcher.h"
#include "experiments/sweeps/slurm_launcher.h"
#include "experiments/runner/run_dir.h"
#include "experiments/runner/train_log.h"
#include "experiments/runner/train_state.h"

namespace tn {
namespace {

using nlohmann::ordered_json;
namespace fs = std::filesystem;

constexpr const char* kIndexFile = "sweep.json";
constexpr const char* kLogFile = "train.log";

/// What identifies a point's experiment: its resolved spec without train.threads (which
/// --threads-per-job sets, and which a resume may change) and without `paper:` (values the
/// report shows beside the point's, which may be corrected after it ran).
ordered_json spec_identity(const ExperimentSpec& spec) {
  ordered_json j = spec_to_json(spec);
  j["train"].erase("threads");
  j.erase("paper");  // the paper's values for the report: not part of what a point runs
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

/// Whether identity's train.max_steps is above the one of `ran`, the spec a point ran with (both
/// integers): a raise that train --resume allows.
bool max_steps_above(const ordered_json& identity, const ordered_json& ran) {
  const auto steps = [](const ordered_json& j) {
    return j.is_object() && j.contains("train") && j["train"].contains("max_steps") ? j["train"]["max_steps"]
                                                                                     : ordered_json();
  };
  const ordered_json was = steps(ran), now = steps(identity);
  return was.is_number_integer() && now.is_number_integer() && now.get<int64_t>() > was.get<int64_t>();
}

/// identity with the train.max_steps the point ran with, when identity raises it, and with the
/// schedule's total_steps it ran with (a cosine or polynomial decay extended with the run, as
/// train --resume allows): what the point must otherwise equal.
ordered_json with_ran_max_steps(const ordered_json& identity, const ordered_json& ran) {
  ordered_json out = identity;
  if (!max_steps_above(identity, ran)) return out;
  out["train"]["max_steps"] = ran["train"]["max_steps"];
  const auto total = [](const ordered_json& j) -> const ordered_json* {
    const auto train = j.find("train");
    if (train == j.end() || !train->contains("schedule") || !(*train)["schedule"].contains("total_steps")) return nullptr;
    return &(*train)["schedule"]["total_steps"];
  };
  if (const ordered_json* was = total(ran); was && total(out)) out["train"]["schedule"]["total_steps"] = *was;
  return out;
}

/// Whether `identity` is the point that ran with only train.max_steps raised: the run then
/// continues (train --resume allows a higher max_steps) instead of being refused as changed.
bool raised_max_steps(const ordered_json& identity, const PointRecord& ran) {
  return max_steps_above(identity, ran.spec) && with_ran_max_steps(identity, ran.spec) == ran.spec;
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
  out = path + " is " + a.dump() + " in this sweep but " + b.dump() + " in the sweep that ran";
  return true;
}

ordered_json overrides_json(const std::vector<SpecOverride>& overrides) {
  ordered_json out = ordered_json::object();
  for (const SpecOverride& o : overrides) out[o.key] = o.value;
  return out;
}

/// What brings a sweep command back to the one that ran: its --set/--grid when they differ from
/// the recorded ones, else the sweep file.
std::string how_to_match(const SweepIndex& ran, const SweepSpec& sweep) {
  if (ran.command_set == sweep.command_line.set && ran.command_grid == sweep.command_line.grid)
    return "restore the sweep file";
  SweepIndex now;
  now.command_set = sweep.command_line.set;
  now.command_grid = sweep.command_line.grid;
  now.smoke = ran.smoke;
  const std::string was = ran.command_line_words(), is = now.command_line_words();
  return "the sweep that ran was given" + (was.empty() ? std::string(" no --set or --grid") : was) +
         " and this command" + (is.empty() ? std::string(" none") : is) + ": rerun with the same ones";
}

/// The child's command line: `transnormer train BASE --set ... --out DIR --threads T --resume|--overwrite`:
/// a point that does not resume starts afresh in its folder, which belongs to the sweep (a point
/// killed before its first checkpoint, a diverged one) and may hold that earlier attempt.
std::vector<std::string> train_command(const SweepSpec& sweep, const SweepPoint& point, const SweepOptions& options,
                                       bool resume) {
  std::vector<std::string> argv = {options.binary, "train", point.base};
  for (const SpecOverride& o : sweep.set) argv.insert(argv.end(), {"--set", o.assignment()});
  for (const SpecOverride& o : point.overrides) argv.insert(argv.end(), {"--set", o.assignment()});
  if (point.drops_paper) argv.insert(argv.end(), {"--set", "paper=null"});  // not the base's values
  argv.insert(argv.end(), {"--out", (fs::path(options.out_dir) / point.dir).string(), "--threads",
                           std::to_string(options.threads_per_job)});
  if (sweep.command_line.smoke) argv.push_back("--smoke");
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

std::unique_ptr<PointLauncher> make_launcher(const SweepSpec& sweep, const SweepOptions& options) {
  if (options.launcher == "local") return std::make_unique<LocalLauncher>(options.jobs, options.ranks_per_point);
  if (options.launcher != "slurm")
    throw ConfigError("--launcher " + options.launcher + ": unknown launcher; use local or slurm");
  SlurmOptions o;
  o.job_name = sweep.name;
  o.folder = fs::absolute(fs::path(options.out_dir) / "slurm");
  o.workdir = fs::current_path();
  o.sbatch_args = options.slurm_args;
  o.threads = options.threads_per_job;
  o.ranks = options.ranks_per_point;
  o.max_running = options.slurm_max_running;
  o.poll_s = options.poll_s;
  return std::make_unique<SlurmLauncher>(std::move(o));
}

class SweepRun {
 public:
  SweepRun(const SweepSpec& sweep, const SweepOptions& options)
      : sweep_(sweep),
        options_(options),
        index_(reconcile_index(sweep, options.out_dir)),
        launcher_(make_launcher(sweep, options)) {}
  SweepOutcome run();
  /// The points to run now, in sweep order, after taking over the ones the launcher still has.
  void plan();
  /// The launch of one point: its command, resuming from its checkpoint or not. No side effects.
  PointLaunch prepare(size_t point, bool resume) const;
  std::string script_for_queue() const;

 private:
  PointRecord& record(size_t point) { return *index_.find(sweep_.points[point].dir); }
  const PointRecord& record(size_t point) const { return *index_.find(sweep_.points[point].dir); }
  void save() const { write_sweep_index((fs::path(options_.out_dir) / kIndexFile).string(), index_); }
  bool on_slurm() const { return options_.launcher == "slurm"; }
  bool resumes(size_t point) const;
  void launch_next();
  void apply(const PointEvent& event);
  void finish(const PointEvent& event);
  void log_progress(const std::string& event) const;

  const SweepSpec& sweep_;
  SweepOptions options_;
  SweepIndex index_;
  std::unique_ptr<PointLauncher> launcher_;
  std::deque<size_t> queue_;
  std::set<size_t> resumed_;        // points whose launch resumes from a checkpoint
  std::vector<double> finished_s_;  // wall times of the points finished in this session
  int stop_signal_ = 0;
};

bool SweepRun::resumes(size_t point) const {
  // A diverged point starts afresh (its last checkpoint leads to the same divergence); any other
  // point with a checkpoint continues from it.
  return record(point).state != PointState::Diverged && resumable(fs::path(options_.out_dir) / sweep_.points[point].dir);
}

PointLaunch SweepRun::prepare(size_t point, bool resume) const {
  const SweepPoint& p = sweep_.points[point];
  PointLaunch launch;
  launch.point = point;
  launch.argv = launcher_->command(train_command(sweep_, p, options_, resume));
  launch.log = fs::path(options_.out_dir) / p.dir / kLogFile;
  return launch;
}

std::string SweepRun::script_for_queue() const {
  const auto* slurm = dynamic_cast<const SlurmLauncher*>(launcher_.get());
  if (!slurm) throw std::logic_error("slurm_dry_run needs SweepOptions::launcher \"slurm\"");
  std::vector<PointLaunch> launches;
  for (size_t point : queue_) launches.push_back(prepare(point, resumes(point)));
  if (launches.empty()) return "";
  return slurm_batch_script(slurm->options(), launches);
}

void SweepRun::launch_next() {
  const size_t count = std::min(launcher_->free_slots(), queue_.size());
  if (count == 0) return;
  std::vector<PointLaunch> launches;
  for (size_t i = 0; i < count; ++i) {
    const size_t point = queue_.front();
    queue_.pop_front();
    const bool resume = resumes(point);
    if (resume) resumed_.insert(point);
    PointLaunch launch = prepare(point, resume);
    const fs::path dir = fs::path(options_.out_dir) / sweep_.points[point].dir;
    fs::create_directories(dir);
    fs::remove(dir / kDivergedFile);
    const std::string command = shell_command(launch.argv);
    {
      std::ofstream log(launch.log, std::ios::app);
      log << "# transnormer sweep " << sweep_.name << ": " << command << "\n";
    }
    PointRecord& r = record(point);
    r.command = command;
    r.launcher = launcher_->name();
    r.jobs = on_slurm() ? static_cast<int>(count) : options_.jobs;
    r.threads = options_.threads_per_job;
    r.ranks = options_.ranks_per_point > 1 ? std::optional<int>(options_.ranks_per_point) : std::nullopt;
    r.exit_code.reset();
    r.error.clear();
    r.pid.reset();
    r.slurm_job.reset();
    r.slurm_task.reset();
    launches.push_back(std::move(launch));
  }
  for (const PointEvent& e : launcher_->launch(launches)) apply(e);
}

/// Records a Queued or Started event (and hands Ended ones to finish).
void SweepRun::apply(const PointEvent& event) {
  if (event.kind == PointEvent::Kind::Ended) return finish(event);
  PointRecord& r = record(event.point);
  r.state = event.kind == PointEvent::Kind::Queued ? PointState::Queued : PointState::Running;
  if (event.pid) r.pid = event.pid;
  if (event.slurm_job) r.slurm_job = event.slurm_job;
  if (event.slurm_task) r.slurm_task = event.slurm_task;
  save();
  const std::string where = event.slurm_job ? " as Slurm task " + *event.slurm_job + "_" + std::to_string(*event.slurm_task)
                                            : "";
  const std::string dir = (fs::path(options_.out_dir) / sweep_.points[event.point].dir).string();
  if (event.kind == PointEvent::Kind::Queued)
    log_progress("queued " + sweep_.points[event.point].name + where);
  else
    log_progress(std::string(resumed_.count(event.point) ? "resuming " : "started ") + sweep_.points[event.point].name + where +
                 " in " + dir);
}

void SweepRun::finish(const PointEvent& event) {
  const SweepPoint& p = sweep_.points[event.point];
  PointRecord& r = record(event.point);
  const fs::path dir = fs::path(options_.out_dir) / p.dir;
  const bool summary = fs::exists(dir / "summary.json");
  r.exit_code = event.exit_code;
  // A resumed point's wall time adds this launch to the earlier ones that trained it.
  if (event.wall_s) r.wall_s = *event.wall_s + (resumed_.count(event.point) && r.wall_s ? *r.wall_s : 0.0);
  r.pid.reset();
  const int code = event.exit_code.value_or(-1);
  std::string event_text;
  if (summary && (code == 0 || !event.exit_code)) {
    r.state = PointState::Done;
    r.error.clear();
    if (r.wall_s) finished_s_.push_back(*r.wall_s);
    event_text = p.name + " done" + (r.wall_s ? " in " + format_duration(*r.wall_s) : "");
  } else if (event.killed || code == 143 || code == 130 || !event.exit_code) {
    // Stopped (by this sweep, a scheduler or the OOM killer), not failed: the next run resumes it
    // from its last checkpoint.
    r.state = PointState::Pending;
    r.error = event.killed && !event.how.empty() ? event.how : last_error_line(dir / kLogFile);
    event_text = p.name + " interrupted (" + (event.exit_code ? "exit " + std::to_string(code) : event.how) +
                 "); a rerun resumes it";
  } else {
    r.state = code == 1 && fs::exists(dir / kDivergedFile) ? PointState::Diverged : PointState::Failed;
    r.error = last_error_line(dir / kLogFile);
    if (event.wall_s) finished_s_.push_back(*event.wall_s);
    event_text = p.name + " " + to_string(r.state) + " (exit " + std::to_string(code) + "): " + r.error;
    spdlog::error("sweep {}: point {} {} (exit {}): {}; its log: {}", sweep_.name, p.name, to_string(r.state),
                  code, r.error, (dir / kLogFile).string());
  }
  save();
  log_progress(event_text);
}

void SweepRun::log_progress(const std::string& event) const {
  int done = 0, failed = 0, diverged = 0, running = 0, queued = 0, left = 0;
  for (size_t i = 0; i < sweep_.points.size(); ++i) {
    const PointState s = index_.find(sweep_.points[i].dir)->state;
    // A failed point waiting for its retry (--retry-failed) counts as left, not as failed too.
    const bool retrying = std::find(queue_.begin(), queue_.end(), i) != queue_.end();
    done += s == PointState::Done;
    failed += s == PointState::Failed && !retrying;
    diverged += s == PointState::Diverged && !retrying;
    running += s == PointState::Running;
    queued += s == PointState::Queued;
    left += s == PointState::Pending || retrying;  // after a stop, the points a rerun takes up
  }
  std::string eta = "ETA after the first point";
  if (!finished_s_.empty()) {
    double mean = 0;
    for (double s : finished_s_) mean += s;
    mean /= static_cast<double>(finished_s_.size());
    const double left = static_cast<double>(queue_.size() + queued) + 0.5 * running;
    eta = "ETA " + format_duration(mean * left / std::max(1, on_slurm() ? running + queued : options_.jobs));
  }
  spdlog::info("sweep {}: {} | {} done, {} failed, {}{} running, {}{} {} | {}", sweep_.name, event, done, failed,
               diverged ? std::to_string(diverged) + " diverged, " : "", running,
               queued ? std::to_string(queued) + " queued, " : "", left, stop_signal_ ? "pending" : "left", eta);
}

void SweepRun::plan() {
  for (size_t i = 0; i < sweep_.points.size(); ++i) {
    PointRecord& r = record(i);
    const bool finished = r.state == PointState::Done && fs::exists(fs::path(options_.out_dir) / r.dir / "summary.json");
    const bool failed = r.state == PointState::Failed || r.state == PointState::Diverged;
    if (finished || (failed && !options_.retry_failed)) continue;
    const bool live = (r.state == PointState::Queued || r.state == PointState::Running) && r.launcher == "slurm";
    if (live && !on_slurm())
      throw ConfigError("point `" + r.name + "` was submitted to Slurm (task " + r.slurm_job.value_or("?") + "_" +
                        std::to_string(r.slurm_task.value_or(-1)) + ") and may still be there: follow it with "
                        "--launcher slurm, or scancel " + r.slurm_job.value_or("the job") + " and rerun");
    if (live && launcher_->adopt(i, r.slurm_job, r.slurm_task)) continue;
    if (r.state != PointState::Failed && r.state != PointState::Diverged) r.state = PointState::Pending;
    queue_.push_back(i);
  }
  // Before anything is launched: the sweep writes (the log a point's output is appended to, its
  // index) and deletes (diverged.json) only its own regular files; a link or FIFO there is refused.
  refuse_non_regular((fs::path(options_.out_dir) / kIndexFile).string(), "the sweep");
  refuse_non_directory((fs::path(options_.out_dir) / "slurm").string(), "the sweep");
  for (size_t point : queue_) {
    const fs::path dir = fs::path(options_.out_dir) / sweep_.points[point].dir;
    refuse_non_directory(dir.string(), "the sweep");
    check_run_files(dir.string());
    // A run the sweep never launched (none of its commands started it): not the point's to resume
    // nor the sweep's to delete.
    if (record(point).command.empty() && holds_run(dir.string()))
      throw ConfigError("point `" + sweep_.points[point].name + "`: its folder " + shell_quote(dir.string()) +
                        " holds a run this sweep did not start; move that folder away (or delete it) and rerun, "
                        "or give the sweep another --out");
  }
}

SweepOutcome SweepRun::run() {
  // One sweep per folder: a second would train every point again into the same directories.
  const DirLock lock = DirLock::acquire(options_.out_dir, "sweep folder");
  plan();
  save();
  spdlog::info("sweep {}: {} points, {} to run{}, {} with {} thread(s) each; index {}", sweep_.name,
               sweep_.points.size(), queue_.size(),
               launcher_->active() ? ", " + std::to_string(launcher_->active()) + " followed in Slurm" : "",
               on_slurm() ? std::string("on Slurm") : std::to_string(options_.jobs) + " at a time",
               options_.threads_per_job, (fs::path(options_.out_dir) / kIndexFile).string());
  while (!queue_.empty() || launcher_->active() > 0) {
    if (!stop_signal_ && options_.stop_requested)
      if (const int signal = options_.stop_requested()) {
        stop_signal_ = signal;
        queue_.clear();
        spdlog::warn("sweep: {} received: stopping {} point(s); each running one saves a checkpoint first",
                     strsignal(signal), launcher_->active());
        launcher_->stop();
      }
    if (!stop_signal_) launch_next();
    if (options_.detach && queue_.empty()) break;
    for (const PointEvent& e : launcher_->poll()) apply(e);
  }
  SweepOutcome outcome;
  outcome.stop_signal = stop_signal_;
  for (const SweepPoint& p : sweep_.points) {
    switch (index_.find(p.dir)->state) {
      case PointState::Done: ++outcome.done; break;
      case PointState::Failed: ++outcome.failed; break;
      case PointState::Diverged: ++outcome.diverged; break;
      case PointState::Pending:
      case PointState::Queued:
      case PointState::Running: ++outcome.pending; break;
    }
  }
  outcome.detached = options_.detach;
  spdlog::info("sweep {}: {} done, {} failed, {} diverged, {} pending{}; index {}", sweep_.name, outcome.done,
               outcome.failed, outcome.diverged, outcome.pending,
               options_.detach ? " (detached: rerun the same command to follow the Slurm tasks)" : "",
               (fs::path(options_.out_dir) / kIndexFile).string());
  if (outcome.failed + outcome.diverged > 0 && !stop_signal_ && !options_.detach && !options_.retry_failed)
    spdlog::warn("sweep {}: {} point(s) failed or diverged and stay so on a rerun; to run them again, rerun this "
                 "command with --retry-failed{} (their errors are in {})",
                 sweep_.name, outcome.failed + outcome.diverged,
                 // a smoke test's scratch folder is new each time: the rerun names this one
                 sweep_.command_line.smoke ? " --out " + shell_quote(options_.out_dir) : std::string(),
                 (fs::path(options_.out_dir) / kIndexFile).string());
  return outcome;
}

}  // namespace

int SweepOutcome::exit_code() const {
  if (stop_signal) return 128 + stop_signal;
  if (detached) return failed + diverged == 0 ? 0 : 1;
  return failed + diverged + pending == 0 ? 0 : 1;
}

namespace {

/// Whether two paths name one file: the same string, or the same file reached two ways (./a.yaml
/// and a.yaml, a symbolic link, an absolute path).
bool same_file(const std::string& a, const std::string& b) {
  if (a == b) return true;
  std::error_code ec;
  return !a.empty() && !b.empty() && fs::equivalent(a, b, ec);
}

/// A folder's index and this sweep: refused when they share no point (another sweep entirely: its
/// points would mix into one index); said in the log when another file extends or edits the sweep.
void check_same_sweep(const SweepIndex& index, const SweepSpec& sweep, const std::string& out_dir) {
  if (index.points.empty() || same_file(index.sweep_file, sweep.path)) return;
  size_t shared = 0;
  for (const SweepPoint& p : sweep.points) shared += index.find(p.dir) != nullptr;
  const std::string holds = out_dir + " holds the sweep \"" + index.name + "\"" +
                            (index.sweep_file.empty() ? "" : " of " + index.sweep_file);
  if (shared == 0)
    throw ConfigError(holds + ", which has none of the points of " + sweep.path +
                      ": their points would mix in one index; give this sweep its own --out");
  if (shared == index.points.size() && shared == sweep.points.size()) {
    // The same points from another file (a copy, or the file moved): nothing mixes.
    spdlog::info("{}; {} has the same points", holds, sweep.path);
    return;
  }
  spdlog::warn("{}; {} shares {} of its {} points and adds {}; the index keeps all of them", holds, sweep.path,
               shared, index.points.size(), sweep.points.size() - shared);
}

}  // namespace

namespace {

/// Refuses a sweep whose axes differ from those of the sweep that ran in the folder: rerun
/// without the command line's --grid, it would add a default point to the index and rewrite its
/// axes, and the next report would mix the two. (A changed set is refused point by point below,
/// naming the key; a raised train.max_steps and paper values are accepted.)
void check_same_axes(const SweepIndex& index, const SweepSpec& sweep, const std::string& out_dir) {
  if (index.points.empty() || index.axes == sweep.axes) return;
  auto axes_text = [](const std::vector<std::string>& axes) {
    std::string out;
    for (const std::string& a : axes) out += (out.empty() ? "" : ", ") + a;
    return "[" + out + "]";
  };
  throw ConfigError(out_dir + "/" + kIndexFile + " holds the sweep \"" + index.name + "\" varying " +
                    axes_text(index.axes) + " (its command line:" +
                    (index.command_set.empty() && index.command_grid.empty() ? std::string(" no --set or --grid")
                                                                             : index.command_line_words()) +
                    "); this command varies " + axes_text(sweep.axes) +
                    ": their points would mix in one index. Rerun it with the same --grid and --set, or give "
                    "this sweep its own --out");
}

}  // namespace

namespace {

/// Whether no point of `index` ever ran: each pending, never queued in Slurm, its folder holding no
/// run (a sweep whose submission failed). Its command line may then change.
bool nothing_ran(const SweepIndex& index, const std::string& out_dir) {
  return std::all_of(index.points.begin(), index.points.end(), [&](const PointRecord& r) {
    return r.state == PointState::Pending && !r.slurm_job && !holds_run((fs::path(out_dir) / r.dir).string());
  });
}

}  // namespace

SweepIndex reconcile_index(const SweepSpec& sweep, const std::string& out_dir) {
  if (holds_run(out_dir))
    throw ConfigError(shell_quote(out_dir) + " holds a run (its config.yaml, metrics or checkpoint): a sweep goes to a "
                      "folder of its own, its points in its subfolders; give another --out");
  const fs::path path = fs::path(out_dir) / kIndexFile;
  SweepIndex index;
  if (fs::exists(path)) index = read_sweep_index(path.string());
  if (nothing_ran(index, out_dir)) index = SweepIndex{};  // nothing to keep apart: this command's sweep
  check_same_sweep(index, sweep, out_dir);
  check_same_axes(index, sweep, out_dir);
  if (!index.points.empty() && index.smoke != sweep.command_line.smoke)
    throw ConfigError(out_dir + "/" + kIndexFile +
                      (index.smoke ? " holds a smoke test of the sweep (sweep --smoke: 3 steps, 2 batches of each "
                                     "evaluation), not its results; give the real sweep its own --out"
                                   : " holds the sweep's real runs; a smoke test goes to a scratch folder of its own: "
                                     "leave --out out, or give another"));
  index.smoke = sweep.command_line.smoke;
  index.name = sweep.name;
  index.sweep_file = sweep.path;
  index.base = sweep.base;
  index.set = overrides_json(sweep.set);
  index.axes = sweep.axes;
  const SweepIndex ran = index;  // as recorded: a refusal below names the command line that ran
  index.command_set = sweep.command_line.set;
  index.command_grid = sweep.command_line.grid;
  std::error_code ec;
  index.cwd = fs::current_path(ec).string();
  index.out = out_dir;
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
      // A raised train.max_steps is allowed (above): the refusal names the key that is not.
      if (first_difference(with_ran_max_steps(identity, r->spec), r->spec, "", difference))
        throw ConfigError(sweep.path + ": point `" + p.name + "` (" + (fs::path(out_dir) / p.dir).string() +
                          ") differs from the one that ran: " + difference + "; " + how_to_match(ran, sweep) +
                          ", or give the changed sweep another --out (or name)");
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

std::string slurm_dry_run(const SweepSpec& sweep, const SweepOptions& options) {
  SweepRun run(sweep, options);
  run.plan();
  return run.script_for_queue();
}

std::string describe_sweep(const SweepSpec& sweep, const std::string& out_dir, bool retry_failed) {
  const SweepIndex index = reconcile_index(sweep, out_dir);
  std::string out = "sweep " + sweep.name + ": " + std::to_string(sweep.points.size()) + " points from " +
                    (sweep.base.empty() ? std::string("their own bases") : sweep.base) + " into " + out_dir + "\n";
  size_t to_run = 0, retried = 0;
  for (const SweepPoint& p : sweep.points) {
    const PointState state = index.find(p.dir)->state;
    std::string overrides;
    if (p.base != sweep.base) overrides += " (from " + p.base + ")";
    for (const SpecOverride& o : p.overrides) overrides.append(" ").append(o.assignment());
    out += fmt::format("{:<9} {:<40} {}\n", to_string(state), p.dir, overrides.empty() ? " (the base as it is)" : overrides);
    const bool failed = state == PointState::Failed || state == PointState::Diverged;
    to_run += state != PointState::Done && (!failed || retry_failed);
    retried += failed && retry_failed;
  }
  out += fmt::format("{} to run{}\n", to_run,
                     retried ? fmt::format(" ({} failed or diverged, retried with --retry-failed)", retried) : "");
  if (!sweep.set.empty()) {
    out += "every point also sets:";
    for (const SpecOverride& o : sweep.set) out.append(" ").append(o.assignment());
    out += "\n";
  }
  return out;
}

}  // namespace tn
