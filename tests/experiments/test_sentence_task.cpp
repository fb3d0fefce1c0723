// The sentence_prediction task on the real GLUE files with the real GPT-2 BPE: RoBERTa's input
// layout, length batching, the stream place, metrics and predictions, the majority baselines,
// submission files, MNLI's extra splits, and what it refuses.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "experiments/runner/training_batches.h"
#include "experiments/spec/spec.h"
#include "experiments/tasks/registry.h"
#include "experiments/tasks/sentence_prediction.h"
#include "experiments/tasks/sequence_classification.h"
#include "tests/glue_fixtures.h"
#include "tests/test_paths.h"
#include "tests/temp_dir.h"

using namespace tn;

namespace {
/// A tiny encoder fine-tune on GLUE `task` (extra YAML lines appended to data:).
ExperimentSpec glue_spec(const std::string& task, const std::vector<std::string>& overrides = {},
                         const std::string& extra_data = "") {
  const test::TempDir tmp("glue_task");  // one folder per process: ctest -j runs cases side by side
  const std::string path = tmp.file("spec.yaml");
  std::ofstream(path) << "task: sentence_prediction\n"
                         "model: {arch: encoder, head: classification, pooling: cls, d_model: 16, n_layers: 1,\n"
                         "        n_heads: 2, positional: learned, max_positions: 128, token_mixer: norm_attention,\n"
                         "        prenorm: false, final_norm: false}\n"
                         "data: {reader: glue, task: " + task + ", max_positions: 128" + extra_data + "}\n"
                         "train: {batch_size: 32, max_steps: 5, seed: 4}\n";
  return load_spec(path, overrides);
}
const SequenceClassificationTask& as_sentence(const Task& t) { return dynamic_cast<const SequenceClassificationTask&>(t); }
}  // namespace

TEST_CASE("sentence_prediction: SST-2 batches by length with little padding, and the stream place restores them") {
  const ExperimentSpec spec = glue_spec("SST-2");
  auto task = make_task(spec, test::data_root());
  CHECK(as_sentence(*task).train_padding_fraction() < 0.10);
  auto other = make_task(spec, test::data_root());
  auto a = task->new_batch(), b = other->new_batch();
  TrainingBatches ta(*task), tb(*other);
  for (int i = 0; i < 3; ++i) ta.next(*a);
  tb.stream().restore(ta.stream().state(), "state");
  std::multiset<size_t> sizes;
  for (int i = 0; i < 2200; ++i) {  // past the first epoch (67,349 / 32 = 2,105 batches)
    ta.next(*a);
    tb.next(*b);
    const auto& x = static_cast<const SequenceBatch&>(*a);
    const auto& y = static_cast<const SequenceBatch&>(*b);
    REQUIRE(x.inputs == y.inputs);
    REQUIRE(x.labels == y.labels);
    REQUIRE(x.rows <= 32);
    for (int64_t r = 0; r < x.rows; ++r) REQUIRE(x.inputs[r * x.seq_len] == 0);  // <s> first
  }
  CHECK(ta.stream().epochs_done() > 1.0);
  CHECK_THROWS_AS(tb.stream().restore({{"epoch", 0}, {"batch", 1 << 30}}, "s"), DataError);
}

TEST_CASE("sentence_prediction: MRPC pairs, accuracy and F1, predictions and the majority baseline") {
  ExperimentSpec spec = glue_spec("MRPC");
  auto task = make_task(spec, test::data_root());
  task->configure_model(spec.model, spec.vocab_size_given, spec.path);
  CHECK(spec.model.num_classes == 2);
  CHECK(spec.model.vocab_size == 50265);
  auto batch = task->new_batch();
  TrainingBatches(*task).next(*batch);
  const auto& x = static_cast<const SequenceBatch&>(*batch);
  // <s> a </s></s> b </s>: every row holds the separator pair.
  for (int64_t r = 0; r < x.rows; ++r) {
    bool pair = false;
    for (int64_t t = 1; t < x.seq_len; ++t) pair |= x.inputs[r * x.seq_len + t - 1] == 2 && x.inputs[r * x.seq_len + t] == 2;
    REQUIRE(pair);
  }
  TransNormerModel model(spec.model, 1);
  const Metrics m = task->evaluate(model, Task::kValid, 64);
  CHECK(m.names() == std::vector<std::string>{"loss", "accuracy", "f1", "examples"});
  CHECK(m.at("examples") == 408);
  CHECK(m.at("loss") == doctest::Approx(std::log(2.0)).epsilon(0.2));  // an untrained head
  CHECK(task->evaluate(model, Task::kValid, 5).at("accuracy") == doctest::Approx(m.at("accuracy")));
  const std::vector<nlohmann::json> p = task->predictions(Task::kValid);
  REQUIRE(p.size() == 408);
  int64_t right = 0;
  for (const nlohmann::json& r : p) {
    REQUIRE(r.contains("id"));
    REQUIRE(r["score"].get<double>() >= 0.5);  // the predicted class's probability, of two
    right += r["label"] == r["prediction"];
  }
  CHECK(static_cast<double>(right) / 408 == doctest::Approx(m.at("accuracy")));
  // Majority class of train is 1 (2,474 of 3,668): dev has 279 of 408, F1 = 2·279 / (2·279 + 129).
  const TaskReport r = task->report();
  CHECK(*r.baselines.at("majority_valid_accuracy") == doctest::Approx(279.0 / 408.0));
  CHECK(*r.baselines.at("majority_valid_f1") == doctest::Approx(558.0 / 687.0));
  CHECK_FALSE(task->has_split(Task::kTest));  // GLUE test files carry no labels
}

TEST_CASE("sentence_prediction: STS-B is regression with one output, Pearson and Spearman") {
  ExperimentSpec spec = glue_spec("STS-B");
  auto task = make_task(spec, test::data_root());
  task->configure_model(spec.model, spec.vocab_size_given, spec.path);
  CHECK(spec.model.num_classes == 1);
  TransNormerModel model(spec.model, 1);
  const Metrics m = task->evaluate(model, Task::kValid, 64);
  CHECK(m.names() == std::vector<std::string>{"loss", "pearson", "spearman", "examples"});
  CHECK(m.at("loss") > 1.0);  // MSE of a near-zero output against scores of mean ~2.4
  const std::vector<nlohmann::json> p = task->predictions(Task::kValid);
  REQUIRE(p.size() == 1500);
  CHECK(p[0]["label"].get<double>() == doctest::Approx(5.0));  // dev.tsv's first score
  CHECK(*task->report().baselines.at("constant_valid_pearson") == 0.0);
}

TEST_CASE("sentence_prediction: a test split's submission file, and MNLI's matched and mismatched splits") {
  ExperimentSpec spec = glue_spec("SST-2");
  auto task = make_task(spec, test::data_root());
  task->configure_model(spec.model, spec.vocab_size_given, spec.path);
  TransNormerModel model(spec.model, 1);
  const test::TempDir out("glue_submission");
  const std::vector<std::string> files = task->write_submission(model, Task::kTest, 64, out.path.string());
  REQUIRE(files.size() == 1);
  CHECK(std::filesystem::path(files[0]).filename() == "SST-2.tsv");
  std::istringstream text(read_file(files[0]));
  std::string line;
  std::getline(text, line);
  CHECK(line == "index\tprediction");
  int64_t rows = 0;
  while (std::getline(text, line)) {
    REQUIRE((line == std::to_string(rows) + "\t0" || line == std::to_string(rows) + "\t1"));
    ++rows;
  }
  CHECK(rows == 1821);

  const test::TempDir mnli("glue_mnli_task");
  test::write_mnli_files(mnli);
  ExperimentSpec mspec = glue_spec("MNLI", {"train.batch_size=2"}, ", dir: " + mnli.path.string());
  auto mtask = make_task(mspec, test::data_root());
  mtask->configure_model(mspec.model, mspec.vocab_size_given, mspec.path);
  CHECK(mspec.model.num_classes == 3);
  CHECK(mtask->extra_eval_splits() == std::vector<std::string>{"dev_mismatched"});
  TransNormerModel mmodel(mspec.model, 1);
  CHECK(mtask->evaluate(mmodel, "dev_mismatched", 8).at("examples") == 2);
  const std::vector<std::string> mfiles = mtask->write_submission(mmodel, Task::kTest, 8, out.path.string());
  REQUIRE(mfiles.size() == 2);
  CHECK(std::filesystem::path(mfiles[0]).filename() == "MNLI-m.tsv");
  CHECK(std::filesystem::path(mfiles[1]).filename() == "MNLI-mm.tsv");
  const std::string mm = read_file(mfiles[1]);
  CHECK(std::count(mm.begin(), mm.end(), '\n') == 3);  // header + 2 rows
  CHECK((mm.find("\tentailment\n") != std::string::npos || mm.find("\tneutral\n") != std::string::npos ||
         mm.find("\tcontradiction\n") != std::string::npos));
}

TEST_CASE("sentence_prediction: refuses a decoder, a text reader and a train-less spec") {
  CHECK_THROWS_WITH_AS(make_task(glue_spec("SST-2", {"model.arch=decoder", "model.head=lm"}), test::data_root()),
                       doctest::Contains("arch: encoder with head: classification"), ConfigError);
  CHECK_THROWS_WITH_AS(make_task(glue_spec("QNLI", {"data.train=null"}), test::data_root()),
                       doctest::Contains("data.train"), ConfigError);
}
