#include "experiments/runner/resume.h"

#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "core/platform/process/shell_quote.h"
#include "core/platform/io/safetensors.h"
#include "experiments/outputs/last_session.h"
#include "experiments/spec/spec_yaml.h"
#include "layers/persistence/checkpoint.h"

namespace tn {

namespace {

/// The first key path where two resolved specs' JSON differ ("model.d_model"), with both values
/// as JSON text; key "" when they are equal.
struct Difference {
  std::string key, was, now;
};

Difference first_difference(const nlohmann::ordered_json& a, const nlohmann::ordered_json& b, const std::string& path) {
  if (a.is_object() && b.is_object()) {
    for (const auto& item : a.items()) {
      const std::string key = path.empty() ? item.key() : path + "." + item.key();
      if (!b.contains(item.key())) return {key, item.value().dump(), "(absent)"};
      Difference d = first_difference(item.value(), b[item.key()], key);
      if (!d.key.empty()) return d;
    }
    for (const auto& item : b.items())
      if (!a.contains(item.key())) return {path.empty() ? item.key() : path + "." + item.key(), "(absent)", item.value().dump()};
    return {};
  }
  if (a != b) return {path, a.dump(), b.dump()};
  return {};
}

/// Throws ConfigError, naming the first key and both values, when `spec` differs from the run's
/// config.yaml in more than a resumed run may change (max_steps, threads, the schedule's total_steps).
void check_spec_unchanged(const std::string& config, const ExperimentSpec& spec) {
  ExperimentSpec saved = load_spec(config);
  // The settings a resumed run may change: its length, its threads, and the length of its
  // schedule's decay (extending a cosine run; the lr follows the new curve from the next step).
  if (saved.train.max_steps != spec.train.max_steps)
    spdlog::warn("train.max_steps {} -> {}: the run's config.yaml says {}, the spec now {}; the run trains on to "
                 "step {}. To keep the run's own length, resume with its folder: transnormer train --resume RUN_DIR",
                 saved.train.max_steps, spec.train.max_steps, saved.train.max_steps, spec.train.max_steps,
                 spec.train.max_steps);
  saved.train.max_steps = spec.train.max_steps;
  saved.train.threads = spec.train.threads;
  const int64_t ran_total_steps = saved.train.schedule.total_steps;
  saved.train.schedule.total_steps = spec.train.schedule.total_steps;
  if (same_experiment(saved, spec)) {
    if (ran_total_steps != spec.train.schedule.total_steps)
      spdlog::info("train.schedule.total_steps {} -> {}: the {} schedule is recomputed over {} steps; the lr "
                   "follows the new curve from the resumed step on",
                   ran_total_steps, spec.train.schedule.total_steps, to_string(spec.train.schedule.kind),
                   spec.train.schedule.total_steps);
    return;
  }
  const Difference d = first_difference(spec_to_json(saved), spec_to_json(spec), "");
  throw ConfigError(locate_key(config, d.key) + ": " + d.key + ": the run was trained with " + d.was +
                    ", the spec now gives " + d.now +
                    "; resume with the run's spec (only train.max_steps, threads and the schedule's total_steps "
                    "may change), or train into a new --out");
}

}  // namespace

void check_resumable(const RunDir& run, const ExperimentSpec& spec) {
  auto missing = [&](const std::string& what) {
    if (last_session(run.path()).smoke())  // records only, by design
      return ConfigError(run.path() + ": nothing to resume: a smoke test (train --smoke) keeps no " + what +
                         "; run it again, it takes seconds");
    // A finished run whose checkpoints were dropped (a kept record) has nothing to resume and
    // results that --overwrite would delete: say so rather than advise it.
    if (std::filesystem::exists(run.file("summary.json")))
      return ConfigError(run.path() + ": nothing to resume: " + what +
                         " is missing, and the run is finished (it has summary.json: its results are "
                         "there); to train it again, give another --out");
    return ConfigError(run.path() + ": nothing to resume: " + what +
                       " is missing (a run writes its checkpoint and train state at each "
                       "evaluation, so it stopped before its first); start it again with "
                       "`transnormer train --overwrite` (deletes that run's files) or give another --out");
  };
  for (const char* name : {"config.yaml", "checkpoint.safetensors"})
    if (!std::filesystem::exists(run.file(name))) throw missing(name);
  if (!std::filesystem::exists(run.file(kTrainStateFile)) && !std::filesystem::exists(run.file(kPreviousTrainStateFile)))
    throw missing(kTrainStateFile);
  check_spec_unchanged(run.file("config.yaml"), spec);
}

std::optional<RunSummary> finished_run(const std::string& run, const ExperimentSpec& spec) {
  const std::filesystem::path path = std::filesystem::path(run) / "summary.json";
  if (!std::filesystem::is_regular_file(path)) return std::nullopt;
  RunSummary summary;
  try {
    summary = RunSummary::from_json(nlohmann::json::parse(read_file(path.string())));
  } catch (const std::exception&) {
    return std::nullopt;  // not a summary this tool reads: the resume's own checks name what is wrong
  }
  const int64_t steps = summary.train.steps;
  const bool stopped_early = !summary.stopped_early_at.is_null();
  // More steps done than asked: restore_run refuses it, naming the steps.
  if (steps > spec.train.max_steps || (!stopped_early && steps < spec.train.max_steps)) return std::nullopt;
  // Finished with other settings than the spec gives now: refused, as a resume of them would be.
  // The spec is not yet configured by its data (Task::configure_model): the run's values of what
  // the data fills in (vocab_size when not given, num_classes) stand for them.
  if (const std::string config = (std::filesystem::path(run) / "config.yaml").string();
      std::filesystem::is_regular_file(config)) {
    const ExperimentSpec saved = load_spec(config);
    ExperimentSpec asked = spec;
    if (!asked.vocab_size_given) {
      asked.model.vocab_size = saved.model.vocab_size;
      asked.vocab_size_given = saved.vocab_size_given;
    }
    asked.model.num_classes = saved.model.num_classes;
    check_spec_unchanged(config, asked);
  }
  if (stopped_early) {
    // Its patience ended it; a resume would stop there again. Training on is another run.
    spdlog::warn("{}: nothing to resume: the run stopped early at step {}, its validation not improving for "
                 "train.patience evaluations (its results are in {}); nothing was run or written. To train on, "
                 "start a new run (another --out) with a larger train.patience, or with train.init_from: {}",
                 run, steps, path.string(), run);
    return summary;
  }
  if (!std::filesystem::exists(std::filesystem::path(run) / "checkpoint.safetensors")) {
    spdlog::warn("{}: nothing to resume: the run is finished ({} steps; its results are in {}), and it kept no "
                 "checkpoint (a smoke test, train --smoke, writes its records only), so it cannot be trained "
                 "longer: train the spec without --smoke for a run that can",
                 run, steps, path.string());
    return summary;
  }
  const ScheduleKind kind = spec.train.schedule.kind;
  const bool decays = kind == ScheduleKind::Cosine || kind == ScheduleKind::PolynomialDecay;
  const std::string longer = fmt::format(" --set train.max_steps={}", 2 * steps) +
                             (decays ? fmt::format(" --set train.schedule.total_steps={}", 2 * steps) : "");
  const std::filesystem::path sweep = std::filesystem::path(run).lexically_normal().parent_path();
  if (!sweep.empty() && std::filesystem::exists(sweep / "sweep.json")) {  // a sweep's point: its rows compare
    spdlog::warn("{}: nothing to resume: the run is finished ({} steps of train.max_steps {}; its results are in {}), "
                 "and nothing was run or written. It is a point of the sweep in {}: to train every point longer, "
                 "rerun the sweep's command (`transnormer report {}` prints it) with{}; training this point alone "
                 "would take it out of step with the points it is compared with",
                 run, steps, spec.train.max_steps, path.string(), shell_quote(sweep.string()),
                 shell_quote(sweep.string()), longer);
    return summary;
  }
  spdlog::warn("{}: nothing to resume: the run is finished ({} steps of train.max_steps {}; its results are in {}), "
               "and nothing was run or written. To train it longer: transnormer train --resume {}{}",
               run, steps, spec.train.max_steps, path.string(), shell_quote(run), longer);
  return summary;
}

namespace {

/// Refuses (ConfigError, exit 2) a resume whose data gives another vocabulary than the one the
/// checkpoint was trained with: other data under the data root (another --data-root or
/// TRANSNORMER_DATA) would feed the run ids that mean other tokens, and its next checkpoint would
/// store a vocabulary its weights do not have.
void check_same_vocabulary(const SafetensorsFile& weights, const std::string& checkpoint_path, const Task& task,
                           const std::string& run) {
  const auto it = weights.metadata.find("transnormer.vocab");
  if (it == weights.metadata.end()) return;
  const nlohmann::json stored = nlohmann::json::parse(it->second, nullptr, false);
  if (!stored.is_array()) return;  // load_checkpoint names a malformed list
  const std::vector<std::string> now = task.vocabulary();
  bool same = stored.size() == now.size();
  for (size_t i = 0; same && i < now.size(); ++i) same = stored[i].is_string() && stored[i].get<std::string>() == now[i];
  if (same) return;
  const std::string where = task.report().data.count("train") ? task.report().data.at("train") : "the data";
  throw ConfigError(run + ": the data read now (" + where + ") gives a vocabulary of " + std::to_string(now.size()) +
                    " tokens, not the " + std::to_string(stored.size()) + " that " + checkpoint_path +
                    " was trained with: other data under this data root; resume with the data root the run was "
                    "trained on (--data-root, else $TRANSNORMER_DATA), or start a new run with another --out");
}

}  // namespace

TrainState restore_run(const RunDir& run, const ExperimentSpec& spec, TransNormerModel& model, TrainStep& step,
                       const Task& task, BatchStream& stream) {
  const std::string checkpoint_path = run.file("checkpoint.safetensors");
  const std::string state_path = run.file(kTrainStateFile);
  const std::string previous_state_path = run.file(kPreviousTrainStateFile);
  const SafetensorsFile weights = load_safetensors(checkpoint_path);
  check_same_vocabulary(weights, checkpoint_path, task, run.path());
  auto step_it = weights.metadata.find("transnormer.step");
  const std::string checkpoint_step = step_it == weights.metadata.end() ? std::string("none") : step_it->second;
  // The state written with this checkpoint: the current file, or the previous one when the run
  // stopped between writing the new state and the new checkpoint.
  TrainState state;
  std::string matched;
  for (const std::string& path : {state_path, previous_state_path}) {
    if (!std::filesystem::exists(path)) continue;
    state = load_train_state(path, step.optimizer());
    if (std::to_string(state.step) == checkpoint_step) {
      matched = path;
      break;
    }
  }
  if (matched.empty())
    throw DataError(checkpoint_path + ": no train state (" + state_path + ", " + previous_state_path +
                    ") matches its step (" + checkpoint_step +
                    "); they are missing or from another run. Train again without --resume");
  // The matching state becomes the current one, so the next save keeps it as the previous.
  if (matched == previous_state_path) std::filesystem::rename(previous_state_path, state_path);
  stream.restore(state.stream, state_path);
  if (state.step > spec.train.max_steps)
    throw ConfigError(spec.path + ": train.max_steps=" + std::to_string(spec.train.max_steps) + " is below the " +
                      std::to_string(state.step) + " steps the run in " + run.path() +
                      " already did; raise it to continue, e.g. --set train.max_steps=" +
                      std::to_string(2 * state.step));
  load_weights(model, weights, checkpoint_path);
  step.set_dropout_state(state.dropout_rng);
  return state;
}

}  // namespace tn
