#include "experiments/runner/run_dir.h"

#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "core/platform/io/dir_lock.h"
#include "core/platform/io/own_files.h"
#include "core/platform/io/json_errors.h"
#include "core/platform/process/shell_quote.h"
#include "experiments/outputs/last_session.h"
#include "experiments/runner/best_checkpoint.h"
#include "experiments/runner/train_state.h"

namespace tn {

namespace {
/// The files a run writes (runner, train state, run history, predictions/).
/// (Not train.log: it may be the open stderr of this very process, a sweep's child; the new run's
/// log replaces it.)
const char* const kRunFiles[] = {"config.yaml",       "metrics.jsonl",         "summary.json",
                                 "run.json",          kDivergedFile,           "checkpoint.safetensors",
                                 kBestCheckpointFile, kTrainStateFile,         kPreviousTrainStateFile};
}  // namespace

bool holds_run(const std::string& path) {
  for (const char* name : {"config.yaml", "metrics.jsonl", "summary.json", "checkpoint.safetensors"})
    if (std::filesystem::exists(std::filesystem::symlink_status(std::filesystem::path(path) / name))) return true;
  return false;
}

namespace {

/// The JSON document of the regular file `path`, or null when it is missing, not a regular file or
/// not JSON.
nlohmann::json json_of(const std::filesystem::path& path) {
  if (!std::filesystem::is_regular_file(std::filesystem::symlink_status(path))) return nullptr;
  std::ifstream in(path);
  return nlohmann::json::parse(in, nullptr, false);
}

/// Whether every line of the regular file `path` is a metrics record (a JSON object with an integer
/// "step"), and there is one at least: the metrics.jsonl a run wrote.
bool metrics_of_a_run(const std::filesystem::path& path) {
  if (!std::filesystem::is_regular_file(std::filesystem::symlink_status(path))) return false;
  std::ifstream in(path);
  int64_t records = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("step") || !j["step"].is_number_integer()) return false;
    ++records;
  }
  return records > 0;
}

/// The run files that are in `path`, as "config.yaml, summary.json".
std::string present_run_files(const std::string& path) {
  std::string names;
  for (const char* name : {"config.yaml", "metrics.jsonl", "summary.json", "checkpoint.safetensors"})
    if (std::filesystem::exists(std::filesystem::symlink_status(std::filesystem::path(path) / name)))
      names += (names.empty() ? "" : ", ") + std::string(name);
  return names;
}

}  // namespace

bool holds_run_record(const std::string& path) {
  const nlohmann::json history = json_of(std::filesystem::path(path) / "run.json");
  if (history.is_object() && history.contains("sessions") && history["sessions"].is_array()) return true;
  return metrics_of_a_run(std::filesystem::path(path) / "metrics.jsonl");
}

void check_run_files(const std::string& path) {
  namespace fs = std::filesystem;
  for (const char* name : kRunFiles) refuse_non_regular((fs::path(path) / name).string(), "a run");
  refuse_non_regular((fs::path(path) / "train.log").string(), "a run");
  const fs::path predictions = fs::path(path) / "predictions";
  refuse_non_directory(predictions.string(), "a run");
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(predictions, ec))) return;
  for (const fs::directory_entry& entry : fs::directory_iterator(predictions, ec))
    if (entry.path().extension() == ".jsonl") refuse_non_regular(entry.path().string(), "a run");
}

namespace {

/// Refuses, for a new run in `path` that holds one, what it must not write over or suggests the
/// right way to start again: a real run under a smoke test (even with --overwrite), a smoke test's
/// folder without --overwrite (--resume cannot continue it), a real run without --overwrite.
void refuse_held_run(const std::string& path, bool overwrite, bool smoke) {
  const std::string quoted = shell_quote(path);
  const bool held_smoke = last_session(path).smoke();
  if (smoke && !held_smoke)
    throw ConfigError(quoted + " holds a run that is not a smoke test: a smoke test never writes over a run, even "
                      "with --overwrite; leave out --out (a new scratch folder is made) or give another folder");
  if (overwrite) return;
  if (held_smoke)
    throw ConfigError(quoted + " holds a smoke test (train --smoke, records only: nothing to resume): start it again "
                      "with --overwrite (deletes its files), or give another --out");
  throw ConfigError(quoted + " already holds a run (its config.yaml, metrics or checkpoint): continue it with "
                    "`transnormer train --resume " + quoted + "`, start it again with --overwrite (deletes that "
                    "run's files), or give another --out");
}

}  // namespace

void check_run_dir(const std::string& path, bool resume, bool overwrite, bool smoke) {
  DirLock::check_free(path, "run folder");  // a run at work there comes first: --resume would not help
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::path(path) / "sweep.json", ec))
    throw ConfigError(shell_quote(path) + " is a sweep folder (it holds sweep.json), not a run" +
                      (resume ? ": a rerun of the sweep's own command resumes its stopped points, and `transnormer "
                                "train --resume " + shell_quote(path) + "/<point>` one of them"
                              : ": a run of its own goes to a folder of its own; give another --out (a sweep's "
                                "points train in its subfolders, through `transnormer sweep`)"));
  check_run_files(path);
  if (resume) {
    if (!std::filesystem::is_directory(path))
      throw ConfigError(path + ": nothing to resume: the directory does not exist; "
                        "train without --resume to start a new run");
    return;
  }
  if (!holds_run(path)) return;
  if (!holds_run_record(path))
    throw ConfigError(path + " holds " + present_run_files(path) + ", the names of a run's files, but no run wrote "
                      "them (no run.json or metrics.jsonl of a run): a run would write over them" +
                      (overwrite ? ", and --overwrite deletes only a run's own files" : "") +
                      "; move them away, or give another --out");
  refuse_held_run(path, overwrite, smoke);
}

void claim_run_dir(const std::string& path, bool resume, bool overwrite, bool smoke) {
  check_run_dir(path, resume, overwrite, smoke);
  if (!resume && overwrite && holds_run(path)) clear_run(path);
}

namespace {
/// The splits a run evaluated (the "split" of metrics.jsonl's evaluation lines): those whose
/// predictions/<split>.jsonl it wrote. Lines that do not parse are passed over.
std::set<std::string> evaluated_splits(const std::filesystem::path& metrics) {
  std::set<std::string> out = {"valid", "test"};
  std::ifstream in(metrics);
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("split") && j["split"].is_string()) out.insert(j["split"].get<std::string>());
  }
  return out;
}
}  // namespace

void clear_run(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const std::set<std::string> splits = evaluated_splits(fs::path(path) / "metrics.jsonl");
  for (const char* name : kRunFiles) {
    fs::remove(fs::path(path) / name, ec);
    if (ec) throw IoError((fs::path(path) / name).string() + ": cannot delete (" + ec.message() + ")");
  }
  // predictions/: only the files a run writes there (<split>.jsonl); the folder goes only when
  // that leaves it empty, so a user's own files in it stay.
  const fs::path predictions = fs::path(path) / "predictions";
  if (fs::is_symlink(predictions) || !fs::is_directory(predictions)) return;
  for (const std::string& split : splits) {
    const fs::path file = predictions / (split + ".jsonl");
    if (file.filename() != split + ".jsonl") continue;  // a split name with a path in it: not ours
    fs::remove(file, ec);
    if (ec) throw IoError(file.string() + ": cannot delete (" + ec.message() + ")");
  }
  if (fs::is_empty(predictions, ec)) fs::remove(predictions, ec);
}

RunDir::RunDir(std::string path) : path_(std::move(path)) {
  std::error_code ec;
  std::filesystem::create_directories(path_, ec);
  if (ec) throw DataError("cannot create run directory " + path_ + ": " + ec.message());
}

std::string RunDir::file(const std::string& name) const {
  return (std::filesystem::path(path_) / name).string();
}

void RunDir::append_line(const nlohmann::json& record) {
  metrics_ += dump_json_text(record) + "\n";
  write_own_file(file("metrics.jsonl"), metrics_, "a run");
}

std::vector<EvalRecord> RunDir::resume_metrics(int64_t step, bool keep_evals_at_step) {
  std::ifstream in(file("metrics.jsonl"));
  std::string line, kept;
  std::vector<EvalRecord> evals_at_step;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    nlohmann::json record;
    try {
      record = nlohmann::json::parse(line);
    } catch (const std::exception&) {
    }
    if (!record.is_object() || !record.contains("step") || !record["step"].is_number_integer())
      throw DataError(file("metrics.jsonl") + ":" + std::to_string(number) +
                      ": not a metrics record (a JSON object with an integer \"step\"); delete "
                      "the line, or the file, and resume again");
    const int64_t at = record["step"].get<int64_t>();
    if (at < step || (at == step && (keep_evals_at_step || !record.contains("split")))) {
      kept += line + "\n";
      if (at == step && record.contains("split")) {
        try {
          evals_at_step.push_back(EvalRecord::from_json(record));
        } catch (const std::exception& e) {
          throw DataError(file("metrics.jsonl") + ":" + std::to_string(number) +
                          ": not an evaluation record (" + e.what() +
                          "); delete the line, or the file, and resume again");
        }
      }
    }
  }
  metrics_ = kept;
  write_own_file(file("metrics.jsonl"), metrics_, "a run");
  return evals_at_step;
}

void RunDir::write_summary(const RunSummary& summary) const {
  write_own_file(file("summary.json"), dump_json_text(summary.to_json(), 2) + "\n", "a run");
}

void RunDir::write_config(const std::string& yaml) const {
  write_own_file(file("config.yaml"), yaml, "a run");
}

void RunDir::write_diverged(int64_t step, const std::string& error) const {
  write_own_file(file(kDivergedFile), nlohmann::json{{"step", step}, {"error", error}}.dump(2) + "\n", "a run");
}

void RunDir::write_predictions(const std::string& split, const std::vector<nlohmann::json>& records) const {
  const std::filesystem::path dir = std::filesystem::path(path_) / "predictions";
  refuse_non_directory(dir.string(), "a run");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw IoError(dir.string() + ": cannot create the folder (" + ec.message() + ")");
  std::string text;
  for (const nlohmann::json& r : records) text += dump_json_text(r) + "\n";
  write_own_file((dir / (split + ".jsonl")).string(), text, "a run");
}

}  // namespace tn
