#include "experiments/sweeps/slurm_status.h"

#include <charconv>
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

/// The value of `s` when it is all digits and fits in an int, else nullopt (never a throw: a
/// cluster's answer is not to be trusted with std::stoi).
std::optional<int> small_number(const std::string& s) {
  int value = 0;
  if (!all_digits(s)) return std::nullopt;
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (error != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

}  // namespace

std::vector<SlurmQueuedTask> parse_squeue_tasks(const std::string& text) {
  std::vector<SlurmQueuedTask> tasks;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t a = line.find('|');
    const size_t b = a == std::string::npos ? a : line.find('|', a + 1);
    if (b == std::string::npos) continue;
    const std::optional<int> task = small_number(line.substr(0, a));
    if (!task) continue;  // no array task id of ours (they count from 0 up to the sweep's size)
    SlurmQueuedTask t;
    t.task = *task;
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
    const std::optional<int> d = small_number(rest.substr(0, dash));
    if (!d) return std::nullopt;
    days = *d;
    rest = rest.substr(dash + 1);
  }
  std::vector<double> parts;
  std::istringstream in(rest);
  std::string piece;
  while (std::getline(in, piece, ':')) {
    const std::optional<int> part = small_number(piece);
    if (!part) return std::nullopt;
    parts.push_back(*part);
  }
  if (parts.size() < 2 || parts.size() > 3) return std::nullopt;
  double seconds = 0;
  for (double p : parts) seconds = seconds * 60 + p;
  return days * 86400 + seconds;
}

bool scontrol_has_state(const std::string& text) { return !field(text, "JobState").empty(); }

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
  const std::optional<int> exit_status = small_number(status), sig = small_number(signal);
  if (exit_status && sig && *exit_status <= 255 && *sig <= 127) {
    end.exit_code = *sig != 0 ? 128 + *sig : *exit_status;
    end.killed = *sig != 0;
  } else {
    end.exit_code = state == "COMPLETED" ? 0 : 1;  // no readable code: the state alone says how
  }
  // States in which Slurm, not the command, ended the task: it was stopped, not failed.
  for (const char* s : {"CANCELLED", "TIMEOUT", "PREEMPTED", "NODE_FAIL", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY"})
    if (state == s) end.killed = true;
  end.run_s = parse_slurm_duration(field(text, "RunTime"));
  return end;
}

}  // namespace tn
