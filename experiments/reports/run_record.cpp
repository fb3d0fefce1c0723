#include "experiments/reports/run_record.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/platform/io/atomic_file.h"
#include "core/platform/io/dir_lock.h"
#include "core/platform/io/json_errors.h"
#include "experiments/outputs/metrics.h"
#include "experiments/reports/flat_json.h"
#include "experiments/spec/spec_yaml.h"

namespace tn {

namespace {
namespace fs = std::filesystem;
using nlohmann::json;

void note(RunRecord& run, const std::string& problem) {
  spdlog::warn("report: {}", problem);
  run.problems.push_back(problem);
}

void read_config(RunRecord& run, const std::string& file) {
  try {
    run.config = read_yaml_document(file).root;
  } catch (const std::exception& e) {
    note(run, e.what());
    return;
  }
  for (auto& [key, value] : flatten_json(run.config)) {
    if (key.rfind("paper.", 0) == 0) {
      if (value.is_number()) run.paper[key.substr(6)] = value.get<double>();
      continue;
    }
    run.flat_config.emplace_back(key, std::move(value));
  }
}

void read_summary(RunRecord& run, const std::string& file) {
  try {
    const json j = json::parse(read_file(file));
    run.summary = RunSummary::from_json(j);
  } catch (const std::exception& e) {
    run.state = "unreadable";
    note(run, file + ": " + json_error_message(e));
    return;
  }
  run.state = "done";
  for (const auto& [split, metrics] : run.summary->final) {
    const json values = metrics.to_json();
    for (const auto& item : values.items())
      if (item.value().is_number_integer()) run.count_metrics.push_back(split + "." + item.key());
  }
  for (const auto& [key, value] : flatten_json(run.summary->analysis, "analysis"))
    if (value.is_number() && !value.is_boolean()) run.analysis.emplace_back(key, value.get<double>());
}

void read_metrics(RunRecord& run, const std::string& file) {
  std::ifstream in(file);
  if (!in) {
    note(run, file + ": cannot be read");
    return;
  }
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      auto [train, eval] = parse_metrics_line(json::parse(line));
      if (train) {
        run.train_loss.step.push_back(static_cast<double>(train->step));
        run.train_loss.value.push_back(train->loss);
        run.logged_step = train->step;
        run.logged_train_s = train->train_s;
      } else {
        const json values = eval->metrics.to_json();
        for (const std::string& name : eval->metrics.names()) {
          const std::string full = eval->split + "." + name;
          if (values[name].is_number_integer() &&
              std::find(run.count_metrics.begin(), run.count_metrics.end(), full) == run.count_metrics.end())
            run.count_metrics.push_back(full);
          StepCurve& c = run.evals[full];
          c.step.push_back(static_cast<double>(eval->step));
          c.value.push_back(eval->metrics.at(name));
        }
      }
    } catch (const std::exception& e) {
      note(run, file + ":" + std::to_string(number) + ": " + json_error_message(e) + "; the rest of the file is skipped");
      return;
    }
  }
}

/// config.yaml's train.<key> when it is an integer.
std::optional<int64_t> train_integer(const json& config, const char* key) {
  if (!config.is_object()) return std::nullopt;
  const auto train = config.find("train");
  if (train == config.end() || !train->is_object()) return std::nullopt;
  const auto value = train->find(key);
  if (value == train->end() || !value->is_number_integer()) return std::nullopt;
  return value->get<int64_t>();
}

/// diverged.json, which the runner leaves beside the last good checkpoint: {"step", "error"}.
void read_diverged(RunRecord& run, const std::string& file) {
  run.state = "diverged";
  try {
    const json j = json::parse(read_file(file));
    const std::string error = j.value("error", std::string());
    run.problems.push_back("diverged" + (j.contains("step") ? " at step " + j["step"].dump() : std::string()) +
                           (error.empty() ? "" : ": " + error));
  } catch (const std::exception& e) {
    note(run, file + ": " + json_error_message(e));
  }
}

void read_locality(RunRecord& run, const std::string& file) {
  try {
    const json j = json::parse(read_file(file));
    LocalityCurve c;
    c.r = j.at("r").get<std::vector<double>>();
    c.l = j.at("mean").get<std::vector<double>>();
    if (c.r.size() != c.l.size()) throw std::invalid_argument("\"r\" and \"mean\" differ in length");
    run.locality = std::move(c);
  } catch (const std::exception& e) {
    note(run, file + ": " + json_error_message(e) + " (expected {\"r\": [...], \"mean\": [...], ...})");
  }
}
}  // namespace

std::optional<double> RunRecord::final_metric(const std::string& name) const {
  if (!summary) return std::nullopt;
  const size_t dot = name.find('.');
  if (dot == std::string::npos) return std::nullopt;
  const auto split = summary->final.find(name.substr(0, dot));
  if (split == summary->final.end()) return std::nullopt;
  return split->second.find(name.substr(dot + 1));
}

RunRecord read_run_dir(const std::string& dir) {
  RunRecord run;
  run.dir = dir;
  run.state = "incomplete";
  const fs::path root(dir);
  auto has = [&](const char* name) { return fs::is_regular_file(root / name); };
  if (has("config.yaml")) read_config(run, (root / "config.yaml").string());
  run.max_steps = train_integer(run.config, "max_steps").value_or(0);
  if (has("summary.json")) read_summary(run, (root / "summary.json").string());
  if (!run.summary && has("diverged.json")) read_diverged(run, (root / "diverged.json").string());
  if (run.state == "incomplete" && DirLock::busy(dir)) run.state = "running";  // a train process holds it
  if (has("metrics.jsonl")) read_metrics(run, (root / "metrics.jsonl").string());
  if (has("locality.json")) read_locality(run, (root / "locality.json").string());
  if (run.summary) {
    run.seed = run.summary->train.seed;
  } else if (const std::optional<int64_t> seed = train_integer(run.config, "seed"); seed && *seed >= 0) {
    run.seed = static_cast<uint64_t>(*seed);
  }
  return run;
}

}  // namespace tn
