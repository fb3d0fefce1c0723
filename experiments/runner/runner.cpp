#include "experiments/runner/runner.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>

#include "core/platform/cancel.h"
#include "core/platform/comm/communicator.h"
#include "core/runtime/dnnl/engine.h"
#include "core/error.h"
#include "core/platform/io/dir_lock.h"
#include "core/runtime/math/isa_clones.h"
#include "core/runtime/memory_pool.h"
#include "core/platform/process/shell_quote.h"
#include "core/platform/process/stop_signal.h"
#include "core/platform/system.h"
#include "data/data_root.h"
#include "experiments/analysis/grad_stats.h"
#include "experiments/runner/best_checkpoint.h"
#include "experiments/runner/memory_check.h"
#include "experiments/runner/model_from_data.h"
#include "experiments/runner/resume.h"
#include "experiments/runner/validation_warning.h"
#include "experiments/runner/run_dir.h"
#include "experiments/runner/run_history.h"
#include "experiments/runner/train_log.h"
#include "experiments/runner/train_state.h"
#include "experiments/runner/train_step.h"
#include "experiments/runner/training_batches.h"
#include "experiments/runner/warm_start.h"
#include "experiments/tasks/registry.h"
#include "layers/persistence/checkpoint.h"
#include "layers/persistence/init_from.h"

namespace tn {

std::string resume_command(const std::string& path, const std::string& data_root) {
  std::vector<std::string> argv = {"transnormer", "train", "--resume", path};
  if (!data_root.empty() && data_root != resolve_data_root("")) {
    argv.push_back("--data-root");
    argv.push_back(data_root);
  }
  return shell_command(argv);
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

/// One training run: set up by the constructor (task, model, run directory, resume), then
/// execute() trains, evaluates and writes the outputs.
class Run {
 public:
  Run(const ExperimentSpec& spec, const RunOptions& options, std::unique_ptr<Task> task);
  RunSummary execute();
  /// Records how this session ended in run.json (done, diverged, stopped, failed).
  void finish(const std::string& outcome) {
    if (history_) history_->finish(outcome);
  }

 private:
  /// The constructor's part after run.json has its session: the train step, the warm start or the
  /// restored state, the config. Its exceptions end the session as "failed".
  void prepare(const RunOptions& options);
  void train_steps();
  /// Evaluates `split` after `step`, records and logs it; returns its metrics. A `final_eval` (one
  /// after the run's last validation) is abandoned when a stop is asked part-way (one process
  /// only): the step is saved and TrainingInterrupted thrown; a resume redoes the final evaluations.
  Metrics evaluate(const std::string& split, int64_t step, bool final_eval = false);
  /// After a resume from the checkpoint of a step whose periodic test evaluation was due but is not
  /// in metrics.jsonl (the run was killed or stopped before it ended: the checkpoint is written
  /// with the validation, before the test), evaluates it before training goes on, so the resumed
  /// run records what an uninterrupted one does.
  void redo_missing_evaluations();
  /// The final evaluations of the task's extra splits (MNLI's dev_mismatched).
  void evaluate_extra_splits();
  /// Writes the checkpoint and train state of `step` (refusing non-finite weights).
  void save(int64_t step);
  TrainingDiverged diverged(const std::string& what, int64_t step) const;
  /// Whether the model has a BatchNorm (running statistics): only then can evaluation overflow
  /// while training is finite; without one a non-finite validation loss means divergence.
  bool has_batchnorm() const;
  /// Warns that the validation loss of `step` is not finite (evaluation only; training goes on).
  void warn_non_finite_validation(int64_t step) const;
  /// Warns when the finite validation loss of `step` is far above the training loss of that step
  /// (over 100 nats and 100 times it): with BatchNorm, what the running statistics likely did.
  void warn_outlying_validation(double valid_loss, double train_loss, int64_t step) const;
  /// After the validation `v` of `step`: tracks the best (writing checkpoint_best), then saves.
  /// Returns whether train.patience ends the run here.
  bool checkpoint_after_validation(const Metrics& v, int64_t step);
  /// Saves `step` and throws TrainingInterrupted for `signal`.
  [[noreturn]] void stop(int signal, int64_t step);
  /// stop() when a stop was asked for on any rank; polled after every step and between
  /// evaluations, so a stop waits for one evaluation at most, never for the rest of a step's.
  void stop_if_asked(int64_t step);
  RunSummary summarize() const;
  /// train.max_steps, or the step train.patience stopped the run at.
  int64_t final_step() const { return done_.stopped_early ? done_.step : spec_.train.max_steps; }
  /// Data parallelism: shards the task and gives every rank rank 0's weights. Nothing for one
  /// process.
  void join_ranks();
  /// The signal that stops the run after this step on any rank (0: none); every rank gets the same.
  int64_t stop_signal() const;

  const Clock::time_point start_ = Clock::now();
  Communicator& comm_;
  const bool writer_ = comm_.rank() == 0;  // only rank 0 writes the run directory
  ExperimentSpec spec_;
  RunOptions options_;
  std::unique_ptr<Task> task_;
  TrainingBatches batches_{*task_};  // the training stream over task_'s plan
  std::unique_ptr<TransNormerModel> model_;
  DirLock lock_;  // rank 0's claim on the run directory, held until the run ends
  std::unique_ptr<RunDir> run_;
  std::unique_ptr<RunHistory> history_;
  std::unique_ptr<TrainStep> step_;
  TrainLog log_{0, 0};          // the training log (its open window is saved with each checkpoint)
  std::unique_ptr<GradStats> grad_stats_;  // train.analysis.grad_stats, else null
  BestCheckpoint best_{spec_.train};         // train.checkpoint.best_metric and train.patience
  TrainState done_;             // totals so far (restored on --resume)
  bool finishing_ = false;      // resumed after the last step: only the final evaluations remain
  int64_t saved_step_ = 0;      // step of the checkpoint on disk, 0 before the first
  double comm_s_ = 0;           // this session's seconds in the gradient sums across ranks
  int64_t session_steps_ = 0;   // this session's training steps
  double session_train_s_ = 0;  // and their seconds
  std::map<std::string, Metrics> final_;
};

Run::Run(const ExperimentSpec& spec, const RunOptions& options, std::unique_ptr<Task> task)
    : comm_(options.ranks ? *options.ranks : single_process()), spec_(spec), options_(options), task_(std::move(task)) {
  const TrainSpec& train = spec_.train;
  // The run directory's checks first, writing nothing: refuse before any work, and never over
  // another run's files. Rank 0 claims it once the model is built; the others then only read it (a
  // resumed run's checkpoint).
  if (writer_) check_run_dir(options.out_dir, options.resume, options.overwrite, options.records_only);
  if (!options.resume && !train.init_from.empty()) {  // exists? (a smoke test goes on without it)
    if (options.records_only && smoke_init_from(train.init_from).empty()) spec_.train.init_from.clear();
    if (!options.records_only) init_from_checkpoint_path(train.init_from);
  }
  comm_.barrier();
  if (!options.records_only)  // a smoke test's 3 steps are not the schedule's: its warnings would be noise
    for (const std::string& warning : schedule_warnings(train)) spdlog::warn("{}", warning);
  set_num_threads(train.threads);  // before any oneDNN primitive is made
  configure_model_from_data(*task_, spec_);
  if (const std::string warning = check_validation_plan(*task_, spec_.train, spec_.path); !warning.empty())
    spdlog::warn("{}", warning);
  check_fits_in_memory(
      estimate_training_memory(spec_.model, task_->positions_per_batch(), task_->longest_sequence(),
                               spec_.train.update_freq, spec_.train.eval_batch_size),
      spec_.path);
  model_ = std::make_unique<TransNormerModel>(spec_.model, train.seed);
  spdlog::info("model: {} layers, d_model {}, {} heads, {} parameters, {} threads, kernels {}",
               spec_.model.n_layers, spec_.model.d_model, spec_.model.n_heads,
               model_->params().parameter_count(), num_threads(), kernel_isa());

  if (writer_) {  // one writer per folder: the lock (which creates it), then the files
    lock_ = DirLock::acquire(options.out_dir, "run folder");
    claim_run_dir(options.out_dir, options.resume, options.overwrite, options.records_only);
  }
  run_ = std::make_unique<RunDir>(options.out_dir);
  if (options.on_run_dir && writer_) options.on_run_dir(run_->path());
  if (options.resume) check_resumable(*run_, spec_);
  // run.json first: the record that a run writes this folder's files (--overwrite deletes only a
  // run's), so a kill at any later point leaves it beside them.
  if (writer_)
    history_ = std::make_unique<RunHistory>(run_->path(), options.invocation, num_threads(), comm_.size(), options.resume);
  try {
    prepare(options);
  } catch (...) {
    // A resume refused by restore_run never trained: its record stays as it was. A new run's
    // failed start (a bad warm start) is its only session: recorded as failed.
    if (history_ && options.resume) history_->withdraw();
    else finish("failed");
    throw;
  }
}

void Run::prepare(const RunOptions& options) {
  const TrainSpec& train = spec_.train;
  if (writer_) std::filesystem::remove(run_->file(kDivergedFile));  // this session decides anew
  step_ = std::make_unique<TrainStep>(*model_, train, comm_);
  if (train.analysis.grad_stats) {
    std::vector<std::string> mixers;
    for (MixerKind kind : spec_.model.layers) mixers.emplace_back(to_string(kind));
    grad_stats_ = std::make_unique<GradStats>(mixers);
  }
  if (!options.resume) {  // a new run: no stale state to resume
    if (writer_) {
      std::filesystem::remove(run_->file(kTrainStateFile));
      std::filesystem::remove(run_->file(kPreviousTrainStateFile));
    }
    if (!train.init_from.empty()) warm_start(*model_, train.init_from, task_->vocabulary());
  } else {
    done_ = restore_run(*run_, spec_, *model_, *step_, *task_, batches_.stream());
    if (grad_stats_) grad_stats_->restore(done_.analysis);
    best_.restore(done_.best);
    saved_step_ = done_.step;
    // A run stopped after its last step (or by its patience) but before its final evaluations
    // only evaluates now; the evaluations of that step are redone, in the metrics and in the totals.
    finishing_ = done_.step == train.max_steps || done_.stopped_early;
    if (finishing_) std::erase_if(done_.evals, [&](const EvalRecord& r) { return r.step == done_.step; });
    if (writer_)
      for (EvalRecord& r : run_->resume_metrics(done_.step, !finishing_))  // a finished run's final test
        if (std::none_of(done_.evals.begin(), done_.evals.end(),
                         [&](const EvalRecord& e) { return e.step == r.step && e.split == r.split; }))
          done_.evals.push_back(std::move(r));
    spdlog::info("resuming {} after step {} (epoch {:.2f}){}", run_->path(), done_.step, batches_.stream().epochs_done(),
                 finishing_ ? ": final evaluations only" : "");
  }
  join_ranks();
  if (!writer_) return;
  run_->write_config(spec_to_yaml(spec_));
}

void Run::join_ranks() {
  if (comm_.size() == 1) return;
  batches_.stream().shard(comm_.rank(), comm_.size());
  task_->share_evaluations(comm_);
  for (const auto& [name, var] : model_->params().entries()) {
    comm_.broadcast(var->value.data(), var->value.numel(), 0);
    var->values_changed();
  }
  spdlog::info("data-parallel: rank {} of {}; each rank takes its part of every batch of {}", comm_.rank(),
               comm_.size(), spec_.train.batch_size);
}

int64_t Run::stop_signal() const {
  int64_t signal = options_.stop_requested ? options_.stop_requested() : 0;
  comm_.max(&signal, 1);
  return signal;
}

Metrics Run::evaluate(const std::string& split, int64_t step, bool final_eval) {
  const auto t = Clock::now();
  const int64_t positions_before = model_->positions_forwarded();
  pool_release_cached();  // training buffers are free between steps: give them back first
  Metrics m;
  int asked = 0;  // the signal that abandoned a final evaluation
  try {
    // Several ranks would have to agree batch by batch: they finish the evaluation, then stop.
    const bool cancellable = final_eval && comm_.size() == 1 && options_.stop_requested;
    CancelScope scope(cancellable ? std::function<bool()>([&] { return (asked = options_.stop_requested()) != 0; })
                                  : std::function<bool()>());
    m = task_->evaluate(*model_, split, spec_.train.eval_batch_size, eval_examples_limit(spec_.train));
  } catch (const Cancelled&) {
    pool_release_cached();
    spdlog::info("{} evaluation abandoned: {} asked the run to stop", split, signal_name(asked));
    stop(asked, step);
  }
  pool_release_cached();  // and the evaluation's, so peak memory is max(train, eval), not the sum
  if (const std::vector<nlohmann::json> records = task_->predictions(split); writer_ && !records.empty())
    run_->write_predictions(split, records);
  const double seconds = seconds_since(t);
  const int64_t positions = model_->positions_forwarded() - positions_before;
  done_.eval_s += seconds;
  done_.eval_tokens += positions;
  const EvalRecord record{step, split, m};
  if (writer_) run_->append_metrics(record);
  done_.evals.push_back(record);
  std::string values;
  for (const std::string& name : m.names()) values += fmt::format(" | {} {:.6g}", name, m.at(name));
  const std::string part = spec_.train.limit_eval_batches > 0
                               ? fmt::format(" | at most {} batch{} (train.limit_eval_batches)", spec_.train.limit_eval_batches,
                                             spec_.train.limit_eval_batches == 1 ? "" : "es")
                               : "";
  spdlog::info("step {:>6} | {}{}{} | {:.1f} s, {:.0f} tokens/s", step, split, values, part, seconds,
               seconds > 0 ? static_cast<double>(positions) / seconds : 0.0);
  return m;
}

bool Run::has_batchnorm() const {
  for (const auto& [name, var] : model_->params().entries())
    if (name.ends_with(".running_mean")) return true;
  return false;
}

void Run::warn_non_finite_validation(int64_t step) const {
  // Training is finite (a non-finite training loss, gradient or weight stops the run), so this is
  // evaluation alone: with BatchNorm, the running statistics normalise every batch alike, and in
  // deep stacks of attention without a denominator (cubic in its input's scale) a batch that
  // departs from them grows layer by layer past float range (docs/model.md, "BatchNorm").
  spdlog::warn("step {}: the validation loss is not finite while training is; training goes on. "
               "Evaluation normalises with BatchNorm's running statistics, and a deep model can "
               "overflow there; the metrics are recorded (null in JSON), and the best checkpoint "
               "never takes a non-finite value",
               step);
}

void Run::warn_outlying_validation(double valid_loss, double train_loss, int64_t step) const {
  const std::string warning = outlying_validation_warning(valid_loss, train_loss, has_batchnorm());
  if (!warning.empty()) spdlog::warn("step {}: {}", step, warning);
}

TrainingDiverged Run::diverged(const std::string& what, int64_t step) const {
  const std::string kept =
      saved_step_ > 0
          ? "the run directory keeps the last good checkpoint, from step " + std::to_string(saved_step_)
          : "no checkpoint was written yet (the first comes with the first evaluation)";
  return TrainingDiverged(step, what + " became non-finite at step " + std::to_string(step) + "; " + kept +
                          ". Lower train.optimizer.lr or set train.clip_norm");
}

void Run::save(int64_t step) {
  for (const auto& [name, var] : model_->params().parameters()) {
    const float* p = var->value.data();
    for (int64_t i = 0; i < var->value.numel(); ++i)
      if (!std::isfinite(p[i])) throw diverged("parameter " + name, step);
  }
  // The previous state is kept until the new checkpoint is written, so a run stopped at any
  // point leaves a checkpoint and a train state of the same step for --resume.
  done_.step = step;
  done_.log_window = log_.window_json();
  if (grad_stats_) done_.analysis = grad_stats_->state();
  done_.stream = batches_.stream().state();
  done_.dropout_rng = step_->dropout_rng().state();
  if (writer_ && !options_.records_only) {  // the other ranks hold the same state; rank 0 alone writes it
    const std::string state_path = run_->file(kTrainStateFile);
    if (std::filesystem::exists(state_path)) std::filesystem::rename(state_path, run_->file(kPreviousTrainStateFile));
    save_train_state(state_path, step_->optimizer(), done_);
    save_checkpoint(run_->file("checkpoint.safetensors"), *model_, task_->vocabulary(), step);
  }
  saved_step_ = step;
}

void Run::train_steps() {
  const TrainSpec& train = spec_.train;
  std::vector<std::unique_ptr<Batch>> batches;
  for (int64_t i = 0; i < step_->update_freq(); ++i) batches.push_back(task_->new_batch());
  Tape tape;
  tape.set_bf16(train.precision == Precision::BF16);  // evaluation stays f32 (the master weights)
  if (finishing_) return;  // resumed after the last step: only the final evaluations remain
  redo_missing_evaluations();
  log_ = TrainLog(train.log_every, train.max_steps);
  log_.restore_window(done_.log_window);
  for (int64_t step = done_.step + 1; step <= train.max_steps; ++step) {
    const auto step_start = Clock::now();
    for (auto& b : batches) batches_.next(*b);
    GradStats* probe = grad_stats_ && log_.due(step) ? grad_stats_.get() : nullptr;
    const StepResult r = step_->run(*task_, batches, step, tape, probe);
    if (r.non_finite) throw diverged(r.non_finite, step);
    const std::vector<double> grad_scores = probe ? probe->end_step() : std::vector<double>{};
    const double dt = seconds_since(step_start);
    done_.train_s += dt;
    done_.tokens += r.positions;
    comm_s_ += r.comm_seconds;
    ++session_steps_;
    session_train_s_ += dt;
    log_.add(r, dt);
    if (log_.due(step)) {
      TrainRecord record = log_.flush(step, batches_.stream().epochs_done(), r, done_.train_s);
      record.grad_scores = grad_scores;
      if (writer_) run_->append_metrics(record);
    }
    bool last = step == train.max_steps;
    if (task_->has_split(Task::kValid) && ((train.eval_every > 0 && step % train.eval_every == 0) || last)) {
      Metrics v = evaluate(Task::kValid, step);
      if (!std::isfinite(v.at("loss"))) {
        if (!has_batchnorm()) throw diverged("the validation loss", step);
        warn_non_finite_validation(step);
      } else if (r.targets > 0) {
        warn_outlying_validation(v.at("loss"), r.loss_sum / static_cast<double>(r.targets), step);
      }
      last = checkpoint_after_validation(v, step) || last;
      if (last) final_[Task::kValid] = v;
    }
    stop_if_asked(step);
    if (task_->has_split(Task::kTest) && ((train.test_every > 0 && step % train.test_every == 0) || last)) {
      Metrics t = evaluate(Task::kTest, step, last);
      if (last) final_[Task::kTest] = t;
    }
    if (last) {
      evaluate_extra_splits();
      break;
    }
    stop_if_asked(step);
  }
}

void Run::redo_missing_evaluations() {
  const int64_t step = done_.step;
  const TrainSpec& train = spec_.train;
  if (!options_.resume || step == 0 || !task_->has_split(Task::kTest) || train.test_every <= 0 ||
      step % train.test_every != 0)
    return;
  // Rank 0 read metrics.jsonl, the record of the evaluations done after the checkpoint: its answer.
  int64_t missing = writer_ && std::none_of(done_.evals.begin(), done_.evals.end(), [&](const EvalRecord& e) {
                      return e.step == step && e.split == Task::kTest;
                    });
  comm_.max(&missing, 1);
  if (!missing) return;
  spdlog::info("step {}: its test evaluation was not finished (the run was killed during it); redoing it", step);
  evaluate(Task::kTest, step);
  stop_if_asked(step);
}

bool Run::checkpoint_after_validation(const Metrics& v, int64_t step) {
  if (best_.observe(v, step) && writer_ && !options_.records_only) {
    save_checkpoint(run_->file(kBestCheckpointFile), *model_, task_->vocabulary(), step);
    spdlog::info("best so far: {} -> {}", best_.describe(), kBestCheckpointFile);
  }
  done_.best = best_.state();
  const bool stop = best_.patience_exhausted() && step < spec_.train.max_steps;
  done_.stopped_early = stop;
  save(step);
  if (stop)
    spdlog::info("early stopping at step {}: {} validations without a better {} (best: {})", step,
                 spec_.train.patience, spec_.train.checkpoint.best_metric, best_.describe());
  return stop;
}

void Run::stop(int signal, int64_t step) {
  if (saved_step_ != step) save(step);
  if (options_.records_only)
    throw TrainingInterrupted(signal, fmt::format("stopped by {} after step {}: a smoke test keeps no checkpoint; "
                                                  "run it again", signal_name(signal), step));
  throw TrainingInterrupted(signal, fmt::format("stopped by {} after step {}: the checkpoint and train state of that "
                                                "step are in {}; continue with `{}`",
                                                signal_name(signal), step, run_->path(),
                                                resume_command(run_->path(), options_.data_root)));
}

void Run::stop_if_asked(int64_t step) {
  if (const int64_t signal = stop_signal()) stop(static_cast<int>(signal), step);
}

RunSummary Run::summarize() const {
  RunSummary s;
  s.final = final_;
  s.train = {final_step(),
             batches_.stream().epochs_done(),
             done_.tokens,
             done_.tokens / done_.train_s,
             done_.train_s,
             done_.eval_s,
             done_.eval_tokens,
             done_.eval_s > 0 ? static_cast<double>(done_.eval_tokens) / done_.eval_s : 0.0,
             seconds_since(start_),
             num_threads(),
             spec_.train.seed,
             comm_.size()};
  s.params = model_->params().parameter_count();
  s.vocab_size = spec_.model.vocab_size;
  s.peak_rss_mb = peak_rss_mb();
  const TaskReport report = task_->report();
  s.data = report.data;
  s.baselines = report.baselines;
  s.evals = done_.evals;
  if (grad_stats_) s.analysis = {{"grad_stats", grad_stats_->summary()}};
  s.best = best_.summary();
  if (done_.stopped_early) s.stopped_early_at = done_.step;
  return s;
}

void Run::evaluate_extra_splits() {
  for (const std::string& split : task_->extra_eval_splits()) {
    stop_if_asked(final_step());
    final_[split] = evaluate(split, final_step(), true);
  }
}

RunSummary Run::execute() {
  train_steps();
  if (finishing_) {
    for (const char* split : {Task::kValid, Task::kTest}) {
      if (!task_->has_split(split)) continue;
      stop_if_asked(final_step());
      final_[split] = evaluate(split, final_step(), true);
    }
    evaluate_extra_splits();
  }
  if (saved_step_ != final_step()) save(final_step());
  const RunSummary summary = summarize();
  if (writer_) {
    run_->write_summary(summary);
    // The checkpoint and train state of the last step are on disk: the previous state, kept for a
    // stop in the middle of a save, is no longer needed (it doubled a small run's disk use).
    std::filesystem::remove(run_->file(kPreviousTrainStateFile));
  }
  if (comm_.size() > 1 && session_steps_ > 0)
    spdlog::info("gradient sums across {} ranks: {:.1f} ms per step ({:.1f} % of training time)", comm_.size(),
                 1e3 * comm_s_ / static_cast<double>(session_steps_), 100.0 * comm_s_ / std::max(session_train_s_, 1e-9));
  spdlog::info("done in {}: {:.0f} train tokens/s, peak RSS {:.0f} MB; outputs in {}",
               format_duration(seconds_since(start_)), summary.train.tokens_per_s, summary.peak_rss_mb, run_->path());
  return summary;
}

}  // namespace

RunSummary run_training(const ExperimentSpec& spec, const RunOptions& options, std::unique_ptr<Task> task) {
  Run run(spec, options, std::move(task));
  try {
    RunSummary summary = run.execute();
    run.finish("done");
    return summary;
  } catch (const TrainingDiverged& e) {
    if (!options.ranks || options.ranks->rank() == 0) RunDir(options.out_dir).write_diverged(e.step, e.what());
    run.finish("diverged");
    throw;
  } catch (const TrainingInterrupted&) {
    run.finish("stopped");
    throw;
  } catch (...) {
    run.finish("failed");
    throw;
  }
}

RunSummary run_training(const ExperimentSpec& spec, const RunOptions& options) {
  // The run folder is refused before the data loads (minutes for a large split), not after.
  if (!options.ranks || options.ranks->rank() == 0) check_run_dir(options.out_dir, options.resume, options.overwrite, options.records_only);
  if (options.resume)
    if (std::optional<RunSummary> done = finished_run(options.out_dir, spec)) return *done;
  return run_training(spec, options, make_task(spec, options.data_root));
}

}  // namespace tn
