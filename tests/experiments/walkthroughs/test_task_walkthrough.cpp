// The task walkthrough of docs/architecture.md ("Add a task"), followed as a new task's author
// would for a sequence-level task: shuffled_classification.{h,cpp} in this folder, a factory on
// the classification core (step 1), registered through add_task as its line in registry.cpp
// would register it (step 2), and this file (step 3). The spec loader, the runner and its outputs
// take it unchanged; its data comes through the reader walkthrough's example reader.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>

#include "core/error.h"
#include "data/readers/registry.h"
#include "experiments/outputs/run_summary.h"
#include "experiments/runner/runner.h"
#include "experiments/spec/spec.h"
#include "experiments/tasks/registry.h"
#include "tests/experiments/walkthroughs/register_examples.h"
#include "tests/temp_dir.h"

using namespace tn;

namespace {

/// `n` lines "label<TAB>text": the text "a" * k + "b" * (12 - k) in order (pos) or reversed (neg).
/// Shuffled, the two classes draw from the same texts: only order tells them apart.
std::string ordered_lines(int n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::string out;
  for (int i = 0; i < n; ++i) {
    const int k = 2 + int(gen() % 9);
    std::string text = std::string(size_t(k), 'a') + std::string(size_t(12 - k), 'b');
    const bool pos = gen() % 2;
    if (!pos) std::reverse(text.begin(), text.end());
    out += std::string(pos ? "pos" : "neg") + "\t" + text + "\n";
  }
  return out;
}

std::string spec_text(const std::string& task, const std::string& data,
                      const std::string& head = "arch: encoder, head: classification, pooling: mean, num_classes: 2") {
  return "task: " + task + "\n"
         "model: {" + head + ", d_model: 32, n_layers: 2,\n"
         "        n_heads: 4, positional: sinusoidal, max_positions: 32, diag_layers: 1, relative: none}\n"
         "data: {reader: labelled_lines, path: " + data + ", labels: [neg, pos], max_length: 16}\n"
         "train: {batch_size: 16, max_steps: 150, seed: 5, eval_every: 150, test_every: 150,\n"
         "        optimizer: {lr: 3e-3}, schedule: {warmup_steps: 10}}\n";
}

}  // namespace

TEST_CASE("task walkthrough: shuffled_symbols permutes UTF-8 code points, the same way for the same seed") {
  const std::string text = "héllo wörld, ünïcode ✓";
  const std::string a = walkthrough::shuffled_symbols(text, 7);
  CHECK(a == walkthrough::shuffled_symbols(text, 7));
  CHECK(a != text);
  CHECK(a.size() == text.size());
  for (const char* symbol : {"é", "ö", "ü", "ï", "✓"}) CHECK(a.find(symbol) != std::string::npos);
  std::string sorted_a = a, sorted_text = text;
  std::sort(sorted_a.begin(), sorted_a.end());
  std::sort(sorted_text.begin(), sorted_text.end());
  CHECK(sorted_a == sorted_text);
}

TEST_CASE("task walkthrough: a task added by its documented steps trains through the runner, and shows what it controls") {
  walkthrough::register_examples();
  const test::TempDir tmp("task_walkthrough");
  std::filesystem::create_directories(tmp.file("data"));
  tmp.write("data/train.tsv", ordered_lines(400, 1));
  tmp.write("data/valid.tsv", ordered_lines(200, 2));
  tmp.write("data/test.tsv", ordered_lines(200, 3));
  const auto accuracy = [&](const std::string& task) {
    RunOptions options;
    options.out_dir = tmp.file("run_" + task);
    return run_training(load_spec(tmp.write(task + ".yaml", spec_text(task, tmp.file("data")))), options)
        .final.at("test").at("accuracy");
  };
  // In order, the classes differ by where the a's stand, which sinusoidal positions show the
  // model; shuffled, a text's class is independent of its letters, so no model can beat chance
  // (0.5, within 3.5 standard deviations of 200 coin flips, 0.035 each).
  CHECK(accuracy("sequence_classification") > 0.9);
  CHECK(std::abs(accuracy("shuffled_classification") - 0.5) < 0.125);

  CHECK_THROWS_WITH_AS(make_task(load_spec(tmp.write("lm.yaml", spec_text("shuffled_classification", tmp.file("data"),
                                                                          "arch: decoder, head: lm"))),
                                 tmp.path.string()),
                       doctest::Contains("shuffled_classification"), ConfigError);
  CHECK_THROWS_AS(add_task({"shuffled_classification", "again", &walkthrough::make_shuffled_classification}),
                  std::invalid_argument);
}
