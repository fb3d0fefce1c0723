#include "experiments/sweeps/slurm_status.h"

#include <sstream>

namespace tn {
namespace {

/// The value of " Key=" in a `scontrol -o` line (up to the next space), else "".
std::string field(const std::string& line, const std::string& key) {
  size_t at = line.rfind(key + "=", 0) == 0 ? 0 : line.find(" " + key + "=");
  if (at == std::string::npos) return "";
  if (line[at] == ' ') ++at;
  at += key.size() + 1;
  return line.substr(at, line.find_first_of(" \n", at) - at);
}

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

}  // namespace

std::vector<SlurmQueuedTask> parse_squeue_tasks(const std::string& text) {
  std::vector<SlurmQueuedTask> tasks;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t a = line.find('|');
    const size_t b = a == std::string::npos ? a : line.find('|', a + 1);
    if (b == std::string::npos || !all_digits(line.substr(0, a))) continue;
    SlurmQueuedTask t;
    t.task = std::stoi(line.substr(0, a));
    t.state = line.substr(a + 1, b - a - 1);
    t.node = line.substr(b + 1);
    while (!t.node.empty() && (t.node.back() == '\r' || t.node.back() == ' ')) t.node.pop_back();
    tasks.push_back(t);
  }
  return tasks;
}

bool slurm_state_started(const std::string& state) {
  return !(state == "PENDING" || state == "REQUEUED" || state == "REQUEUE_HOLD" || state == "REQUEUE_FED" ||
           state == "CONFIGURING" || state == "RESV_DEL_HOLD");
}

std::optional<double> parse_slurm_duration(const std::string& text) {
  std::string rest = text;
  double days = 0;
  if (const size_t dash = rest.find('-'); dash != std::string::npos) {
    if (!all_digits(rest.substr(0, dash))) return std::nullopt;
    days = std::stod(rest.substr(0, dash));
    rest = rest.substr(dash + 1);
  }
  std::vector<double> parts;
  std::istringstream in(rest);
  std::string piece;
  while (std::getline(in, piece, ':')) {
    if (!all_digits(piece)) return std::nullopt;
    parts.push_back(std::stod(piece));
  }
  if (parts.size() < 2 || parts.size() > 3) return std::nullopt;
  double seconds = 0;
  for (double p : parts) seconds = seconds * 60 + p;
  return days * 86400 + seconds;
}

std::optional<SlurmTaskEnd> parse_scontrol_end(const std::string& text) {
  const std::string state = field(text, "JobState");
  if (state.empty() || state == "PENDING" || state == "RUNNING" || state == "CONFIGURING" ||
      state == "COMPLETING" || state == "SUSPENDED" || state == "REQUEUED" || state == "RESIZING")
    return std::nullopt;
  SlurmTaskEnd end;
  end.state = state;
  const std::string code = field(text, "ExitCode");  // "status:signal"
  const size_t colon = code.find(':');
  const std::string status = code.substr(0, colon);
  const std::string signal = colon == std::string::npos ? "0" : code.substr(colon + 1);
  if (all_digits(status) && all_digits(signal)) {
    const int sig = std::stoi(signal);
    end.exit_code = sig != 0 ? 128 + sig : std::stoi(status);
    end.killed = sig != 0;
  }
  // States in which Slurm, not the command, ended the task: it was stopped, not failed.
  for (const char* s : {"CANCELLED", "TIMEOUT", "PREEMPTED", "NODE_FAIL", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY"})
    if (state == s) end.killed = true;
  end.run_s = parse_slurm_duration(field(text, "RunTime"));
  return end;
}

}  // namespace tn
