// The runner knows nothing about language modelling: a task defined here, a copy task with its own
// metric (accuracy), trains, evaluates, checkpoints and resumes through run_training exactly as
// language modelling does. Also the TrainStep's update_freq weighting, and the typed run outputs.
#include <doctest/doctest.h>

#include <omp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "core/platform/cancel.h"
#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "core/runtime/rng.h"
#include "experiments/outputs/run_summary.h"
#include "experiments/runner/runner.h"
#include "experiments/runner/train_step.h"
#include "experiments/spec/spec.h"
#include "experiments/tasks/language_modeling.h"

using namespace tn;

namespace {

std::string temp_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("tn_runner_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

/// Copy task: each position's target is its own input token (visible to a causal model), over
/// sequences drawn from a generator seeded by the batch's index in the stream. Metrics: loss and
/// accuracy (argmax == target).
class CopyTask final : public Task {
 public:
  static constexpr int64_t kVocab = 12, kSeq = 8, kBatch = 4, kEpochBatches = 10;
  CopyTask() = default;
  /// With a test split as well (the same batch as valid), and every evaluation's split appended
  /// to *evaluated.
  explicit CopyTask(std::vector<std::string>* evaluated) : evaluated_(evaluated) {}
  /// Reports a NaN validation loss at the validations numbered in `nan_evals` (from 0), as an
  /// evaluation that overflowed would, while training stays finite.
  explicit CopyTask(std::vector<int64_t> nan_evals) : nan_evals_(std::move(nan_evals)) {}

  void configure_model(ModelConfig& model, bool, const std::string&) const override { model.vocab_size = kVocab; }
  int64_t positions_per_batch() const override { return kBatch * kSeq; }
  std::unique_ptr<Batch> new_batch() const override { return std::make_unique<LmTaskBatch>(); }
  /// Epochs of 10 batches of one item each, in order: batch k of the stream is item k mod 10 of
  /// epoch k / 10.
  BatchStream training_stream() const override {
    return BatchStream(
        kEpochBatches,
        [](uint64_t) {
          EpochPlan plan;
          for (int64_t i = 0; i < kEpochBatches; ++i) plan.push_back({i});
          return plan;
        },
        "batch");
  }
  void fill_batch(const std::vector<int64_t>& ids, uint64_t epoch, Batch& batch) const override {
    fill(static_cast<LmTaskBatch&>(batch).data, 1000 + static_cast<int64_t>(epoch) * kEpochBatches + ids.at(0));
  }
  bool has_split(const std::string& split) const override {
    return split == kValid || (evaluated_ && split == kTest);
  }
  std::vector<std::string> metric_names() const override { return {"loss", "accuracy"}; }
  Metrics evaluate(TransNormerModel& model, const std::string& split, int64_t, int64_t = 0) const override {
    if (evaluated_) evaluated_->push_back(split);
    if (on_evaluate) on_evaluate(split);
    throw_if_cancelled();  // between batches, as the real tasks do (this one has a single batch)
    Tape tape;
    tape.set_enabled(false);
    Rng rng(0);
    ForwardContext ctx{tape, false, rng, nullptr};
    LmTaskBatch b;
    fill(b.data, 7);  // the same validation batch every time
    const BatchLoss loss = objective_.loss(ctx, model, b);
    Var hidden = model.forward(ctx, b.data.inputs, b.data.rows, b.data.seq_len);
    std::vector<int64_t> rows(static_cast<size_t>(kBatch * kSeq));
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int64_t>(i);
    const Tensor logits = model.token_logits(ctx, hidden, rows);
    int64_t right = 0;
    for (int64_t r = 0; r < kBatch * kSeq; ++r) {
      const float* row = logits.data() + r * kVocab;
      right += std::max_element(row, row + kVocab) - row == b.data.targets[static_cast<size_t>(r)];
    }
    Metrics m;
    const bool nan = std::find(nan_evals_.begin(), nan_evals_.end(), evaluations_++) != nan_evals_.end();
    m.set("loss", nan ? std::nan("") : loss.sum / static_cast<double>(loss.count));
    m.set("accuracy", static_cast<double>(right) / static_cast<double>(kBatch * kSeq));
    return m;
  }
  std::vector<std::string> vocabulary() const override { return {}; }
  TaskReport report() const override { return {{{"train", "copy"}}, {}}; }
  /// Called at the start of every evaluation with its split (a test's way to kill the run there).
  std::function<void(const std::string&)> on_evaluate;
  BatchLoss loss(ForwardContext& ctx, TransNormerModel& model, const Batch& batch) const override {
    return objective_.loss(ctx, model, batch);
  }

 private:
  static void fill(LmBatch& b, int64_t seed) {
    Rng rng(static_cast<uint64_t>(seed));
    b.rows = kBatch;
    b.seq_len = kSeq;
    b.inputs.resize(kBatch * kSeq);
    for (auto& t : b.inputs) t = static_cast<int32_t>(rng.next_u64() % kVocab);
    b.targets = b.inputs;
    b.n_targets = kBatch * kSeq;
  }
  NextTokenObjective objective_;
  std::vector<std::string>* evaluated_ = nullptr;
  std::vector<int64_t> nan_evals_;
  mutable int64_t evaluations_ = 0;
};

ExperimentSpec copy_spec(const std::string& dir, int64_t max_steps) {
  std::ofstream(dir + "/copy.yaml") << "model: {d_model: 16, n_layers: 1, n_heads: 2, dropout: 0.0, channel_mixer: {d_ff: 32}}\n"
                                       "data: {train: unused.tokens, seq_len: 8}\n"
                                       "train: {max_steps: " << max_steps << ", eval_every: 20, log_every: 10, seed: 5,\n"
                                       "        optimizer: {lr: 1e-2}, schedule: {name: constant}}\n";
  return load_spec(dir + "/copy.yaml");
}

RunOptions run_options(const std::string& out_dir, bool resume) {
  RunOptions options;
  options.out_dir = out_dir;
  options.resume = resume;
  return options;
}

}  // namespace

TEST_CASE("runner: a task defined outside the registry trains, reports its own metric, and resumes exactly") {
  const std::string dir = temp_dir("copy");
  const RunSummary whole = run_training(copy_spec(dir, 60), run_options(dir + "/whole", false), std::make_unique<CopyTask>());
  REQUIRE(whole.final.count("valid") == 1);
  const Metrics& v = whole.final.at("valid");
  CHECK(v.names() == std::vector<std::string>{"loss", "accuracy"});
  REQUIRE(whole.evals.size() == 3);  // steps 20, 40, 60
  CHECK(whole.evals[0].metrics.at("loss") > v.at("loss"));  // training helps
  CHECK(v.at("accuracy") > 0.5);  // chance is 1/12
  CHECK(whole.train.tokens == 60 * CopyTask::kBatch * CopyTask::kSeq);
  CHECK(whole.data.at("train") == "copy");
  // summary.json is the typed summary, key for key.
  std::ifstream in(dir + "/whole/summary.json");
  std::stringstream text;
  text << in.rdbuf();
  CHECK(RunSummary::from_json(nlohmann::json::parse(text.str())) == whole);

  // 40 steps, then --resume to 60: the same numbers as 60 in one go.
  run_training(copy_spec(dir, 40), run_options(dir + "/parts", false), std::make_unique<CopyTask>());
  const RunSummary resumed = run_training(copy_spec(dir, 60), run_options(dir + "/parts", true), std::make_unique<CopyTask>());
  CHECK(resumed.final.at("valid") == v);
  CHECK(resumed.evals == whole.evals);
  CHECK(resumed.train.tokens == whole.train.tokens);
  std::filesystem::remove_all(dir);
}

TEST_CASE("runner: a stop asked for during an evaluation stops before the next one, and --resume runs the rest") {
  const std::string dir = temp_dir("stop_eval");
  std::vector<std::string> whole_evals;
  const RunSummary whole =
      run_training(copy_spec(dir, 40), run_options(dir + "/whole", false), std::make_unique<CopyTask>(&whole_evals));
  REQUIRE(whole_evals == std::vector<std::string>{"valid", "valid", "test"});  // steps 20, 40, 40

  // A SIGTERM that arrives while step 40 is validated: the test evaluation does not start.
  std::vector<std::string> evals;
  RunOptions stopping = run_options(dir + "/parts", false);
  stopping.stop_requested = [&] { return evals.size() == 2 ? SIGTERM : 0; };
  CHECK_THROWS_AS(run_training(copy_spec(dir, 40), stopping, std::make_unique<CopyTask>(&evals)),
                  TrainingInterrupted);
  CHECK(evals == std::vector<std::string>{"valid", "valid"});
  CHECK_FALSE(std::filesystem::exists(dir + "/parts/summary.json"));

  // Resumed with a stop already asked for: nothing is evaluated, the run stays unfinished.
  evals.clear();
  RunOptions resume_stopping = run_options(dir + "/parts", true);
  resume_stopping.stop_requested = [] { return SIGTERM; };
  CHECK_THROWS_AS(run_training(copy_spec(dir, 40), resume_stopping, std::make_unique<CopyTask>(&evals)),
                  TrainingInterrupted);
  CHECK(evals.empty());

  // Resumed: the final evaluations only, with the numbers of the run that was never stopped.
  evals.clear();
  const RunSummary resumed =
      run_training(copy_spec(dir, 40), run_options(dir + "/parts", true), std::make_unique<CopyTask>(&evals));
  CHECK(evals == std::vector<std::string>{"valid", "test"});
  CHECK(resumed.final.at("valid") == whole.final.at("valid"));
  CHECK(resumed.final.at("test") == whole.final.at("test"));
  CHECK(resumed.evals == whole.evals);
  std::filesystem::remove_all(dir);
}

TEST_CASE("runner: a stop asked for during the final test evaluation abandons it, and --resume redoes it") {
  const std::string dir = temp_dir("stop_final_eval");
  std::vector<std::string> whole_evals;
  const RunSummary whole =
      run_training(copy_spec(dir, 40), run_options(dir + "/whole", false), std::make_unique<CopyTask>(&whole_evals));
  // A SIGTERM that arrives once the test evaluation of step 40 has begun: it is left part-way
  // (its result neither recorded nor in a summary) and the run stops; it does not end "done".
  std::vector<std::string> evals;
  RunOptions stopping = run_options(dir + "/parts", false);
  stopping.stop_requested = [&] { return evals.size() == 3 ? SIGTERM : 0; };
  CHECK_THROWS_AS(run_training(copy_spec(dir, 40), stopping, std::make_unique<CopyTask>(&evals)),
                  TrainingInterrupted);
  CHECK(evals == std::vector<std::string>{"valid", "valid", "test"});
  CHECK_FALSE(std::filesystem::exists(dir + "/parts/summary.json"));
  std::ifstream metrics(dir + "/parts/metrics.jsonl");
  for (std::string line; std::getline(metrics, line);) CHECK(line.find("\"test\"") == std::string::npos);

  // Resumed: the final evaluations again, with the numbers of the run that was never stopped.
  evals.clear();
  const RunSummary resumed =
      run_training(copy_spec(dir, 40), run_options(dir + "/parts", true), std::make_unique<CopyTask>(&evals));
  CHECK(evals == std::vector<std::string>{"valid", "test"});
  CHECK(resumed.final.at("test") == whole.final.at("test"));
  CHECK(resumed.evals == whole.evals);
  std::filesystem::remove_all(dir);
}

TEST_CASE("runner: a finished run continued to a later max_steps keeps its final test in summary.json") {
  const std::string dir = temp_dir("continue_done");
  std::vector<std::string> evals;
  const RunSummary first =
      run_training(copy_spec(dir, 20), run_options(dir + "/run", false), std::make_unique<CopyTask>(&evals));
  REQUIRE(first.evals.size() == 2);  // valid and test of step 20
  REQUIRE(first.evals[1].split == "test");
  const RunSummary more =
      run_training(copy_spec(dir, 40), run_options(dir + "/run", true), std::make_unique<CopyTask>(&evals));
  // Step 20's test (in metrics.jsonl all along) stays in the summary, in its place.
  REQUIRE(more.evals.size() == 4);
  CHECK(more.evals[0] == first.evals[0]);
  CHECK(more.evals[1] == first.evals[1]);
  CHECK(more.evals[2].step == 40);
  CHECK(more.evals[3].split == "test");
  std::filesystem::remove_all(dir);
}

TEST_CASE("runner: with BatchNorm a non-finite validation loss is recorded and training goes on, never the best") {
  const std::string dir = temp_dir("nan_valid");
  ExperimentSpec spec = copy_spec(dir, 60);
  // Without BatchNorm, evaluation computes what training does: a NaN validation loss is divergence.
  CHECK_THROWS_AS(run_training(spec, run_options(dir + "/plain", false), std::make_unique<CopyTask>(std::vector<int64_t>{0})),
                  TrainingDiverged);
  spec.model.norm = NormKind::BatchNorm;  // running statistics: evaluation may overflow alone
  spec.train.checkpoint.best_metric = "valid.loss";
  spec.train.checkpoint.maximize = false;
  // Validations at steps 20, 40, 60; the first and the last overflow.
  const RunSummary s = run_training(spec, run_options(dir + "/run", false), std::make_unique<CopyTask>(std::vector<int64_t>{0, 2}));
  REQUIRE(s.evals.size() == 3);
  CHECK(std::isnan(s.evals[0].metrics.at("loss")));
  CHECK(std::isfinite(s.evals[1].metrics.at("loss")));
  CHECK(std::isnan(s.final.at("valid").at("loss")));
  CHECK(s.train.tokens == 60 * CopyTask::kBatch * CopyTask::kSeq);  // all 60 steps trained
  REQUIRE(s.best.is_object());
  CHECK(s.best.at("step") == 40);  // neither NaN was taken, not even the first
  CHECK(std::filesystem::exists(dir + "/run/checkpoint_best.safetensors"));
  CHECK_FALSE(std::filesystem::exists(dir + "/run/diverged.json"));
  // summary.json writes NaN as null and reads it back as NaN.
  std::ifstream in(dir + "/run/summary.json");
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json json = nlohmann::json::parse(text.str());
  CHECK(RunSummary::from_json(json).evals.size() == 3);
  std::filesystem::remove_all(dir);
}

TEST_CASE("train step: update_freq 2 over two half batches equals one step over the whole batch") {
  ModelConfig config;
  config.vocab_size = 20;
  config.d_model = 16;
  config.n_heads = 2;
  config.n_layers = 1;
  config.layers = {MixerKind::NormAttention};
  config.channel_mixer.d_ff = 32;
  config.dropout = 0.0;
  TrainSpec train;
  train.max_steps = 3;
  train.schedule.kind = ScheduleKind::Constant;
  // eps 1: the update is ~ lr·g (no sign(g) for near-zero gradients), so summation-order noise in
  // g stays noise in the weights.
  train.optimizer.eps = 1.0;
  auto batch_of = [](int64_t rows, uint64_t seed) {
    auto b = std::make_unique<LmTaskBatch>();
    Rng rng(seed);
    b->data.rows = rows;
    b->data.seq_len = 6;
    for (int64_t i = 0; i < rows * 6; ++i) {
      b->data.inputs.push_back(static_cast<int32_t>(rng.next_u64() % 20));
      b->data.targets.push_back(i % 5 == 0 ? -100 : static_cast<int32_t>(rng.next_u64() % 20));
      b->data.n_targets += b->data.targets.back() != -100;
    }
    return b;
  };
  TransNormerModel one_model(config, 3), two_model(config, 3);
  std::vector<std::unique_ptr<Batch>> whole, halves;
  whole.push_back(batch_of(4, 9));
  // The same rows, split in two: rows 0-1 and rows 2-3.
  const LmBatch& w = static_cast<LmTaskBatch&>(*whole[0]).data;
  for (int half = 0; half < 2; ++half) {
    auto b = std::make_unique<LmTaskBatch>();
    b->data.rows = 2;
    b->data.seq_len = 6;
    b->data.inputs.assign(w.inputs.begin() + half * 12, w.inputs.begin() + half * 12 + 12);
    b->data.targets.assign(w.targets.begin() + half * 12, w.targets.begin() + half * 12 + 12);
    for (int32_t t : b->data.targets) b->data.n_targets += t != -100;
    halves.push_back(std::move(b));
  }
  TrainStep one(one_model, train, single_process());
  train.update_freq = 2;
  TrainStep two(two_model, train, single_process());
  Tape tape;
  NextTokenObjective objective;
  const StepResult a = one.run(objective, whole, 1, tape);
  const StepResult b = two.run(objective, halves, 1, tape);
  CHECK(a.targets == b.targets);
  CHECK(a.loss_sum == doctest::Approx(b.loss_sum).epsilon(1e-6));
  CHECK(a.grad_norm == doctest::Approx(b.grad_norm).epsilon(1e-5));
  const auto pa = one_model.params().parameters(), pb = two_model.params().parameters();
  double worst = 0;
  for (size_t i = 0; i < pa.size(); ++i)
    for (int64_t j = 0; j < pa[i].second->value.numel(); ++j)
      worst = std::max(worst, std::abs(static_cast<double>(pa[i].second->value.data()[j]) - pb[i].second->value.data()[j]));
  CHECK(worst < 1e-8);  // the same update up to rounding
  CHECK(a.lr == 5e-4);
}

TEST_CASE("runner: a run killed (SIGKILL) during a periodic test evaluation redoes it when resumed") {
  const std::string dir = temp_dir("kill_test_eval");
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);  // the child below runs on one thread: the whole run too, for the same bits
  copy_spec(dir, 60);
  const ExperimentSpec spec = load_spec(dir + "/copy.yaml", {"train.test_every=20"});
  std::vector<std::string> whole_evals;
  const RunSummary whole =
      run_training(spec, run_options(dir + "/whole", false), std::make_unique<CopyTask>(&whole_evals));
  REQUIRE(whole_evals == std::vector<std::string>{"valid", "test", "valid", "test", "valid", "test"});

  // Killed at the start of step 20's test evaluation, after the checkpoint of step 20 (written with
  // its validation): the test of step 20 is in neither metrics.jsonl nor the train state.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::vector<std::string> child_evals;
    auto task = std::make_unique<CopyTask>(&child_evals);  // with a test split
    task->on_evaluate = [](const std::string& split) {
      if (split == "test") ::raise(SIGKILL);
    };
    try {
      run_training(spec, run_options(dir + "/parts", false), std::move(task));
    } catch (...) {
    }
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  std::ifstream metrics(dir + "/parts/metrics.jsonl");
  for (std::string line; std::getline(metrics, line);) CHECK(line.find("\"test\"") == std::string::npos);

  // Resumed: step 20's test first, then the rest, with the numbers of the run that was never killed.
  std::vector<std::string> evals;
  const RunSummary resumed = run_training(spec, run_options(dir + "/parts", true), std::make_unique<CopyTask>(&evals));
  omp_set_num_threads(threads);
  CHECK(evals == std::vector<std::string>{"test", "valid", "test", "valid", "test"});
  CHECK(resumed.evals == whole.evals);
  auto eval_lines = [](const std::string& path) {  // the evaluation lines (training lines carry timings)
    std::vector<std::string> lines;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);)
      if (line.find("\"split\"") != std::string::npos) lines.push_back(line);
    return lines;
  };
  CHECK(eval_lines(dir + "/parts/metrics.jsonl") == eval_lines(dir + "/whole/metrics.jsonl"));
  std::filesystem::remove_all(dir);
}
