#pragma once
// The CLI tests' tiny experiment: a T1 decoder small enough to train in seconds on the real
// WikiText-103 files of the tests' data root.
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/test_paths.h"

namespace tn::test {

/// A tiny T1 decoder spec on the first lines of the real WikiText-103 files.
inline std::string tiny_spec(const std::string& dir, const std::string& extra_train = "") {
  // Small test split: the first 120 lines of wiki.test.tokens.
  std::ifstream in(data_root() + "/wikitext-103/wiki.test.tokens");
  std::ofstream test_file(dir + "/small.test.tokens");
  std::string line;
  for (int i = 0; i < 120 && std::getline(in, line); ++i) test_file << line << "\n";
  return "model:\n"
         "  arch: decoder\n  d_model: 32\n  n_layers: 2\n  n_heads: 2\n  diag_layers: 1\n"
         "  attention: {norm_attention: {kernel: elu, norm: srmsnorm}, diag: {block_size: 16, inner: relu, norm: srmsnorm}}\n"
         "  dropout: 0.1\n"
         "data:\n  train: wikitext-103/wiki.valid.tokens\n  split_valid_from_train: 0.05\n"
         "  test: " + dir + "/small.test.tokens\n  seq_len: 32\n"
         "train:\n  batch_size: 4\n  max_steps: 30\n  seed: 3\n  log_every: 10\n  eval_every: 15\n"
         "  optimizer: {name: adamw, lr: 3e-3}\n  schedule: {name: inverse_sqrt, warmup_steps: 5}\n" +
         extra_train;
}


/// The value of `key` ("loss", "lr") in the training-log line of `step` of a metrics.jsonl text;
/// -1 when there is no such line.
inline double train_value(const std::string& metrics, int64_t step, const std::string& key) {
  std::istringstream in(metrics);
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json r = nlohmann::json::parse(line);
    if (r.value("step", int64_t{0}) == step && !r.contains("split")) return r[key].get<double>();
  }
  return -1.0;
}

/// The (step, loss) of every training-log line of a metrics.jsonl text.
inline std::vector<std::pair<int64_t, double>> train_losses(const std::string& metrics) {
  std::vector<std::pair<int64_t, double>> out;
  std::istringstream in(metrics);
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json r = nlohmann::json::parse(line);
    if (!r.contains("split")) out.emplace_back(r["step"].get<int64_t>(), r["loss"].get<double>());
  }
  return out;
}

}  // namespace tn::test
