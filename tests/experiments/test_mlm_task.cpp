// The masked_lm task on the real WikiText raw text with the real GPT-2 BPE: samples, masks,
// the stream place, evaluation with a fixed mask, and what it refuses.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/runtime/ignore_index.h"
#include "experiments/runner/training_batches.h"
#include "experiments/spec/spec.h"
#include "experiments/tasks/masked_lm.h"
#include "experiments/tasks/registry.h"
#include "tests/test_paths.h"
#include "tests/temp_dir.h"

using namespace tn;

namespace {
ExperimentSpec mlm_spec(const std::vector<std::string>& overrides = {}) {
  const test::TempDir tmp("mlm_task");  // one folder per process: ctest -j runs cases side by side
  const std::string path = tmp.file("spec.yaml");
  std::ofstream(path) << "task: masked_lm\n"
                         "model: {arch: encoder, head: mlm, d_model: 16, n_layers: 1, n_heads: 2, positional: learned,\n"
                         "        max_positions: 64, token_mixer: norm_attention, prenorm: false, final_norm: false}\n"
                         "data: {train: wikitext-2-raw/wiki.valid.raw, split_valid_from_train: 0.1, seq_len: 64,\n"
                         "       test: wikitext-2-raw/wiki.test.raw, tokenizer: gpt2}\n"
                         "train: {batch_size: 3, max_steps: 5, seed: 4}\n";
  return load_spec(path, overrides);
}
}  // namespace

TEST_CASE("masked_lm: complete-mode samples of whole stripped lines, <s> first") {
  const ExperimentSpec spec = mlm_spec();
  auto task = make_task(spec, test::data_root());
  const auto& mlm = dynamic_cast<const MaskedLmTask&>(*task);
  const MlmData& data = mlm.data();
  CHECK(task->vocabulary().size() == 50265);
  CHECK(task->vocabulary()[50264] == "<mask>");
  // wiki.valid.raw has 3,760 lines; the last 376 are held out; blank lines (" ") are skipped.
  CHECK(data.train_lines > 1000);
  CHECK(data.train_lines < 3384);
  int64_t eos = 0;
  for (int64_t i = 0; i < data.train.count(); ++i) {
    REQUIRE(data.train.length(i) <= 64);
    REQUIRE(data.train.data(i)[0] == 0);  // <s>
    for (int64_t t = 1; t < data.train.length(i); ++t) eos += data.train.data(i)[t] == 2;
  }
  CHECK(eos == data.train_lines);  // one </s> per line
  CHECK(data.test.count() > 0);
}

TEST_CASE("masked_lm: batches score the selected positions only, and the stream place restores them") {
  const ExperimentSpec spec = mlm_spec({"train.batch_size=16"});
  auto task = make_task(spec, test::data_root());
  auto other = make_task(spec, test::data_root());
  auto a = task->new_batch(), b = other->new_batch();
  TrainingBatches ta(*task), tb(*other);
  for (int i = 0; i < 5; ++i) ta.next(*a);
  tb.stream().restore(ta.stream().state(), "state");
  int64_t selected = 0, positions = 0;
  for (int i = 0; i < 320; ++i) {  // past the first epoch (4,539 samples: 284 batches)
    ta.next(*a);
    tb.next(*b);
    const MlmBatch& x = static_cast<MlmTaskBatch&>(*a).data;
    const MlmBatch& y = static_cast<MlmTaskBatch&>(*b).data;
    REQUIRE(x.inputs == y.inputs);
    REQUIRE(x.masked_rows == y.masked_rows);
    REQUIRE(x.masked_targets == y.masked_targets);
    REQUIRE(a->targets() == static_cast<int64_t>(x.masked_rows.size()));
    for (int64_t r : x.masked_rows) REQUIRE(x.key_valid[r] == 1);
    for (size_t k = 0; k < x.key_valid.size(); ++k)
      if (!x.key_valid[k]) REQUIRE(x.inputs[k] == 1);  // padding is <pad>
    selected += x.n_targets();
    for (uint8_t v : x.key_valid) positions += v;
  }
  CHECK(ta.stream().epochs_done() > 1.0);
  // 15 % of the non-special tokens (the <s> and the </s> of each line are never chosen).
  CHECK(static_cast<double>(selected) / positions == doctest::Approx(0.14).epsilon(0.1));
  CHECK_THROWS_AS(tb.stream().restore({{"epoch", 0}, {"position", 1 << 30}}, "s"), DataError);
}

TEST_CASE("masked_lm: evaluation uses one fixed mask, whatever the batch size and the seed") {
  ExperimentSpec spec = mlm_spec();
  auto task = make_task(spec, test::data_root());
  task->configure_model(spec.model, spec.vocab_size_given, spec.path);
  CHECK(spec.model.vocab_size == 50265);
  TransNormerModel model(spec.model, 1);
  const Metrics m4 = task->evaluate(model, Task::kValid, 4);
  const Metrics m7 = task->evaluate(model, Task::kValid, 7);
  CHECK(m4.names() == std::vector<std::string>{"loss", "ppl", "tokens"});
  CHECK(m4.at("tokens") == m7.at("tokens"));
  CHECK(m4.at("loss") == doctest::Approx(m7.at("loss")).epsilon(1e-5));
  CHECK(m4.at("ppl") == doctest::Approx(std::exp(m4.at("loss"))));
  // An untrained model is near uniform over the dictionary.
  CHECK(m4.at("loss") == doctest::Approx(std::log(50265.0)).epsilon(0.1));
  auto reseeded = make_task(mlm_spec({"train.seed=9"}), test::data_root());
  CHECK(reseeded->evaluate(model, Task::kValid, 4).at("loss") == doctest::Approx(m4.at("loss")).epsilon(1e-6));
  const TaskReport r = task->report();
  REQUIRE(r.baselines.at("unigram_valid_ppl").has_value());
  CHECK(*r.baselines.at("unigram_valid_ppl") > 100.0);
}

TEST_CASE("masked_lm: refuses a decoder, the word tokenizer and a seq_len beyond the positions") {
  auto fails = [](const std::vector<std::string>& set, const std::string& text) {
    CHECK_THROWS_WITH_AS(make_task(mlm_spec(set), test::data_root()), doctest::Contains(text.c_str()), ConfigError);
  };
  fails({"model.arch=decoder", "model.head=lm"}, "arch: encoder with head: mlm");
  fails({"data.tokenizer=word"}, "data.tokenizer");
  CHECK_THROWS_WITH_AS(mlm_spec({"data.seq_len=100"}), doctest::Contains("max_positions"), ConfigError);
  // The language_modeling task refuses BPE text.
  CHECK_THROWS_WITH_AS(make_task(mlm_spec({"task=language_modeling", "model.arch=decoder", "model.head=lm"}),
                                 test::data_root()),
                       doctest::Contains("data.tokenizer"), ConfigError);
}
