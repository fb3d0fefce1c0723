// The language_modeling task on real WikiText-103 lines: its stream place saves and restores to
// the same batches, evaluation gives loss/ppl/tokens, and what it refuses.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>

#include "core/error.h"
#include "experiments/runner/training_batches.h"
#include "experiments/spec/spec.h"
#include "experiments/tasks/language_modeling.h"
#include "experiments/tasks/registry.h"
#include "tests/test_paths.h"
#include "tests/temp_dir.h"

using namespace tn;

namespace {
ExperimentSpec lm_spec(const std::vector<std::string>& overrides = {}) {
  const test::TempDir tmp("lm_task");  // one folder per process: ctest -j runs cases side by side
  const std::string path = tmp.file("spec.yaml");
  std::ofstream(path) << "model: {d_model: 16, n_layers: 1, n_heads: 2, token_mixer: norm_attention}\n"
                         "data: {train: wikitext-103/wiki.valid.tokens, split_valid_from_train: 0.05, seq_len: 64}\n"
                         "train: {batch_size: 3, max_steps: 5, seed: 4}\n";
  return load_spec(path, overrides);
}
}  // namespace

TEST_CASE("language_modeling: the saved stream place gives the same batches, across an epoch") {
  const ExperimentSpec spec = lm_spec();
  auto task = make_task(spec, test::data_root());
  auto other = make_task(spec, test::data_root());
  auto a = task->new_batch(), b = other->new_batch();
  TrainingBatches ta(*task), tb(*other);
  for (int i = 0; i < 7; ++i) ta.next(*a);
  tb.stream().restore(ta.stream().state(), "state");
  for (int i = 0; i < 2000; ++i) {  // well past the first epoch
    ta.next(*a);
    tb.next(*b);
    const LmBatch& x = static_cast<LmTaskBatch&>(*a).data;
    const LmBatch& y = static_cast<LmTaskBatch&>(*b).data;
    REQUIRE(x.inputs == y.inputs);
    REQUIRE(x.targets == y.targets);
  }
  CHECK(ta.stream().epochs_done() > 1.0);
  CHECK(ta.stream().epochs_done() == tb.stream().epochs_done());
  CHECK_THROWS_WITH_AS(tb.stream().restore({{"epoch", 0}, {"position", 1 << 30}}, "state.safetensors"),
                       doctest::Contains("state.safetensors: batch stream position"), DataError);
  CHECK_THROWS_AS(tb.stream().restore({{"epoch", "x"}}, "s"), DataError);
}

TEST_CASE("language_modeling: evaluation metrics, splits, vocabulary and what it refuses") {
  ExperimentSpec spec = lm_spec();
  auto task = make_task(spec, test::data_root());
  task->configure_model(spec.model, spec.vocab_size_given, spec.path);
  CHECK(spec.model.vocab_size == static_cast<int64_t>(task->vocabulary().size()));
  CHECK(task->has_split(Task::kValid));
  CHECK_FALSE(task->has_split(Task::kTest));
  TransNormerModel model(spec.model, 1);
  const Metrics m = task->evaluate(model, Task::kValid, 4);
  CHECK(m.names() == std::vector<std::string>{"loss", "ppl", "tokens"});
  CHECK(m.at("ppl") == doctest::Approx(std::exp(m.at("loss"))));
  // An untrained model is near uniform over the vocabulary.
  CHECK(m.at("loss") == doctest::Approx(std::log(static_cast<double>(spec.model.vocab_size))).epsilon(0.1));
  // Batching changes only the rounding of the sums.
  CHECK(task->evaluate(model, Task::kValid, 7).at("loss") == doctest::Approx(m.at("loss")).epsilon(1e-6));
  CHECK(task->report().baselines.at("unigram_valid_ppl").has_value());
  CHECK_FALSE(task->report().baselines.at("unigram_test_ppl").has_value());
  CHECK_THROWS_AS(task->evaluate(model, Task::kTest, 4), ConfigError);

  ModelConfig small = spec.model;
  small.vocab_size = 10;
  CHECK_THROWS_WITH_AS(task->configure_model(small, true, "s.yaml"), doctest::Contains("smaller than the training vocabulary"),
                       ConfigError);
  CHECK_THROWS_WITH_AS(make_task(lm_spec({"model.arch=encoder"}), test::data_root()),
                       doctest::Contains("needs arch: decoder"), ConfigError);
  CHECK_THROWS_WITH_AS(make_task(lm_spec({"train.batch_size=100000"}), test::data_root()),
                       doctest::Contains("train.batch_size: 100000 exceeds the"), ConfigError);
}
