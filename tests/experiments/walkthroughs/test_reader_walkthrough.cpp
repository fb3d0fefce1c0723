// The reader walkthrough of docs/architecture.md ("Add a reader"), followed as a new reader's
// author would: labelled_lines.{h,cpp} and labelled_lines_spec.{h,cpp} in this folder (step 1),
// registered through add_reader as its line in registry.cpp would register it (step 2), and this
// file (step 3). Nothing else changes: the spec loader, the sequence_classification task, the
// runner and its outputs take the new reader as they take the library's.
#include <doctest/doctest.h>

#include <filesystem>
#include <random>
#include <string>

#include "core/error.h"
#include "data/readers/registry.h"
#include "experiments/outputs/run_summary.h"
#include "experiments/runner/runner.h"
#include "experiments/spec/spec.h"
#include "tests/data_error.h"
#include "tests/experiments/walkthroughs/register_examples.h"
#include "tests/temp_dir.h"

using namespace tn;

namespace {

/// `n` lines of 8-15 random letters from a..h, labelled pos when they hold an 'h', else neg.
std::string labelled_lines(int n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::string out;
  for (int i = 0; i < n; ++i) {
    const int length = 8 + int(gen() % 8);
    std::string text;
    for (int c = 0; c < length; ++c) text += char('a' + gen() % 8);
    out += std::string(text.find('h') != std::string::npos ? "pos" : "neg") + "\t" + text + "\n";
  }
  return out;
}

/// A spec training a small T1 encoder on the folder `data` with the example reader.
std::string spec_text(const std::string& data, int steps) {
  return "task: sequence_classification\n"
         "model: {arch: encoder, head: classification, pooling: mean, num_classes: 2, d_model: 32, n_layers: 2,\n"
         "        n_heads: 4, positional: sinusoidal, max_positions: 32, diag_layers: 1, relative: none}\n"
         "data: {reader: labelled_lines, path: " + data + ", labels: [neg, pos], max_length: 24}\n"
         "train: {batch_size: 16, max_steps: " + std::to_string(steps) + ", seed: 3, eval_every: " +
         std::to_string(steps) + ", test_every: " + std::to_string(steps) + ",\n"
         "        optimizer: {lr: 3e-3}, schedule: {warmup_steps: 10}}\n";
}

}  // namespace

TEST_CASE("reader walkthrough: a reader added by its documented steps trains, evaluates and tests through the runner") {
  walkthrough::register_examples();
  const test::TempDir tmp("reader_walkthrough");
  std::filesystem::create_directories(tmp.file("data"));
  tmp.write("data/train.tsv", labelled_lines(400, 1));
  tmp.write("data/valid.tsv", labelled_lines(100, 2));
  tmp.write("data/test.tsv", labelled_lines(100, 3));
  const std::string spec_path = tmp.write("spec.yaml", spec_text(tmp.file("data"), 150));
  const ExperimentSpec spec = load_spec(spec_path);
  CHECK(spec.data->reader() == "labelled_lines");
  CHECK(spec.data->to_json()["labels"].dump() == R"(["neg","pos"])");
  RunOptions options;
  options.out_dir = tmp.file("run");
  const RunSummary summary = run_training(spec, options);
  // Most lines hold an 'h' (1 - (7/8)^11.5 = 0.78 of them: pos is the majority). The
  // rule is one character's presence, which a mean-pooled encoder learns: well above the 0.78 of
  // always answering pos.
  const double majority = 0.78;
  CHECK(summary.final.at("test").at("accuracy") > majority + 0.1);
  CHECK(summary.final.at("valid").at("accuracy") > majority + 0.1);
}

TEST_CASE("reader walkthrough: the example reader's errors name the file and line or the key, with the fix") {
  walkthrough::register_examples();
  const test::TempDir tmp("reader_walkthrough_errors");
  std::filesystem::create_directories(tmp.file("data"));
  const std::string good = labelled_lines(20, 4);
  tmp.write("data/train.tsv", good);
  tmp.write("data/valid.tsv", good);
  tmp.write("data/test.tsv", "pos\tabc\nmaybe\tabd\n");
  RunOptions options;
  options.out_dir = tmp.file("run");
  const ExperimentSpec spec = load_spec(tmp.write("spec.yaml", spec_text(tmp.file("data"), 2)));
  const auto error = [&] { return test::data_error([&] { run_training(spec, options); }); };
  std::string message = error();
  CHECK(message.find(tmp.file("data/test.tsv") + ":2: unknown label \"maybe\"") != std::string::npos);
  tmp.write("data/test.tsv", "pos abc\n");
  message = error();
  CHECK(message.find(tmp.file("data/test.tsv") + ":1: expected 2 tab-separated fields") != std::string::npos);
  std::filesystem::remove(tmp.file("data/valid.tsv"));
  message = error();
  CHECK(message.find(tmp.file("data/valid.tsv")) != std::string::npos);
  CHECK(!std::filesystem::exists(tmp.file("run")));  // refused before the run folder was made

  std::string no_labels = spec_text(tmp.file("data"), 2);
  no_labels.replace(no_labels.find(", labels: [neg, pos]"), 20, "");
  CHECK_THROWS_WITH_AS(load_spec(tmp.write("no_labels.yaml", no_labels)),
                       doctest::Contains("data.labels: must list at least two label names"), ConfigError);
  std::string twice = spec_text(tmp.file("data"), 2);
  twice.replace(twice.find("labels: [neg, pos]"), 18, "labels: [neg, neg]");
  CHECK_THROWS_WITH_AS(load_spec(tmp.write("twice.yaml", twice)), doctest::Contains("data.labels: names \"neg\" twice"),
                       ConfigError);
  CHECK_THROWS_AS(add_reader({"labelled_lines", "again", &walkthrough::resolve_labelled_lines_spec}),
                  std::invalid_argument);
}
