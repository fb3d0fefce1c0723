#include "experiments/sweeps/sweep_index.h"

#include <stdexcept>
#include <utility>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "core/platform/io/json_errors.h"
#include "core/platform/io/own_files.h"
#include "core/platform/process/shell_quote.h"

namespace tn {
namespace {

constexpr std::pair<PointState, const char*> kStates[] = {{PointState::Pending, "pending"},
                                                          {PointState::Queued, "queued"},
                                                          {PointState::Running, "running"},
                                                          {PointState::Done, "done"},
                                                          {PointState::Failed, "failed"},
                                                          {PointState::Diverged, "diverged"}};

PointState parse_state(const std::string& text) {
  for (const auto& [state, name] : kStates)
    if (text == name) return state;
  throw std::invalid_argument("unknown point state \"" + text + "\"");
}

const nlohmann::ordered_json& need(const nlohmann::ordered_json& o, const char* key) {
  if (!o.is_object() || !o.contains(key)) throw std::invalid_argument(std::string("missing \"") + key + "\"");
  return o[key];
}

}  // namespace

const char* to_string(PointState state) {
  for (const auto& [s, name] : kStates)
    if (s == state) return name;
  return "pending";
}

PointRecord* SweepIndex::find(const std::string& dir) {
  return const_cast<PointRecord*>(std::as_const(*this).find(dir));
}

const PointRecord* SweepIndex::find(const std::string& dir) const {
  for (const PointRecord& p : points)
    if (p.dir == dir) return &p;
  return nullptr;
}

std::string SweepIndex::command_line_words() const {
  std::string out;
  for (const std::string& s : command_set) out += " --set " + shell_quote(s);
  for (const std::string& g : command_grid) out += " --grid " + shell_quote(g);
  if (smoke) out += " --smoke";
  return out;
}

nlohmann::ordered_json SweepIndex::to_json() const {
  nlohmann::ordered_json out;
  out["name"] = name;
  out["sweep_file"] = sweep_file;
  out["base"] = base;
  out["set"] = set;
  out["axes"] = axes;
  out["command_line"] = {{"set", command_set}, {"grid", command_grid}};
  if (smoke) out["command_line"]["smoke"] = true;
  if (!cwd.empty()) out["command_line"]["cwd"] = cwd;
  if (!this->out.empty()) out["command_line"]["out"] = this->out;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const PointRecord& p : points) {
    nlohmann::ordered_json r;
    r["name"] = p.name;
    r["dir"] = p.dir;
    r["overrides"] = p.overrides;
    r["command"] = p.command;
    r["state"] = to_string(p.state);
    r["exit_code"] = p.exit_code ? nlohmann::ordered_json(*p.exit_code) : nlohmann::ordered_json(nullptr);
    r["wall_s"] = p.wall_s ? nlohmann::ordered_json(*p.wall_s) : nlohmann::ordered_json(nullptr);
    if (p.pid) r["pid"] = *p.pid;
    if (p.jobs) r["jobs"] = *p.jobs;
    if (p.threads) r["threads"] = *p.threads;
    if (p.ranks) r["ranks"] = *p.ranks;
    if (!p.launcher.empty()) r["launcher"] = p.launcher;
    if (p.slurm_job) r["slurm_job"] = *p.slurm_job;
    if (p.slurm_task) r["slurm_task"] = *p.slurm_task;
    r["error"] = p.error;
    r["spec"] = p.spec;
    list.push_back(std::move(r));
  }
  out["points"] = std::move(list);
  return out;
}

SweepIndex SweepIndex::from_json(const nlohmann::ordered_json& o) {
  SweepIndex index;
  index.name = need(o, "name").get<std::string>();
  index.sweep_file = o.value("sweep_file", "");
  index.base = o.value("base", "");
  if (o.contains("set")) index.set = o["set"];
  index.axes = need(o, "axes").get<std::vector<std::string>>();
  if (const auto c = o.find("command_line"); c != o.end() && c->is_object()) {  // absent before it was recorded
    index.command_set = c->value("set", std::vector<std::string>{});
    index.command_grid = c->value("grid", std::vector<std::string>{});
    index.smoke = c->value("smoke", false);
    index.cwd = c->value("cwd", "");
    index.out = c->value("out", "");
  }
  for (const nlohmann::ordered_json& r : need(o, "points")) {
    PointRecord p;
    p.name = need(r, "name").get<std::string>();
    p.dir = need(r, "dir").get<std::string>();
    p.overrides = need(r, "overrides");
    p.command = r.value("command", "");
    p.state = parse_state(need(r, "state").get<std::string>());
    if (r.contains("exit_code") && !r["exit_code"].is_null()) p.exit_code = r["exit_code"].get<int>();
    if (r.contains("wall_s") && !r["wall_s"].is_null()) p.wall_s = r["wall_s"].get<double>();
    if (r.contains("pid") && !r["pid"].is_null()) p.pid = r["pid"].get<int>();
    if (r.contains("jobs") && r["jobs"].is_number_integer()) p.jobs = r["jobs"].get<int>();
    if (r.contains("threads") && r["threads"].is_number_integer()) p.threads = r["threads"].get<int>();
    if (r.contains("ranks") && r["ranks"].is_number_integer()) p.ranks = r["ranks"].get<int>();
    p.launcher = r.value("launcher", "");
    if (r.contains("slurm_job") && r["slurm_job"].is_string()) p.slurm_job = r["slurm_job"].get<std::string>();
    if (r.contains("slurm_task") && r["slurm_task"].is_number_integer()) p.slurm_task = r["slurm_task"].get<int>();
    p.error = r.value("error", "");
    if (r.contains("spec")) p.spec = r["spec"];  // absent: a point that never ran here
    index.points.push_back(std::move(p));
  }
  return index;
}

void write_sweep_index(const std::string& path, const SweepIndex& index) {
  write_own_file(path, index.to_json().dump(2) + "\n", "the sweep");
}

SweepIndex read_sweep_index(const std::string& path) {
  refuse_non_regular(path, "the sweep");  // a FIFO would block the read; a link is no index of this folder
  const std::string text = read_file(path);
  try {
    return SweepIndex::from_json(nlohmann::ordered_json::parse(text));
  } catch (const std::exception& e) {
    throw DataError(path + ": not a sweep index written by `transnormer sweep` (" + json_error_message(e) +
                    "); move it away to start the sweep afresh");
  }
}

}  // namespace tn
