// Sizes in a spec (hostile-input campaign, class 1): every size key of the model and train
// sections has an upper bound, refused at the spec's file:line (or its --set) with the key, the
// bound and the fix, before anything is computed from it. `--set model.attention.diag.block_size=
// 4611686018427387904` was a segfault at the first step; n_layers 2^62 sized a list, d_model 2^62
// overflowed the default d_ff; train.update_freq 10^9 passed validation and grew to 3.4 GB.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "experiments/spec/spec.h"
#include "tests/temp_dir.h"

using namespace tn;

namespace {

const std::string kSpec =
    "model:\n  d_model: 64\n  n_layers: 2\n  n_heads: 4\n  diag_layers: 1\n"
    "data:\n  train: train.tokens\n  seq_len: 32\n"
    "train:\n  max_steps: 10\n  optimizer: {lr: 1e-3}\n";

/// The ConfigError message of kSpec with `overrides`, or "" when it loads.
std::string spec_error(const std::vector<std::string>& overrides, const std::string& text = kSpec) {
  tn::test::TempDir dir("spec_sizes");
  const std::string path = dir.write("spec.yaml", text);
  try {
    (void)load_spec(path, overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("spec sizes: each size key of the model section is bounded, named with the bound") {
  const std::string huge = "4611686018427387904";  // 2^62
  const std::vector<std::pair<std::string, std::string>> keys = {
      {"model.attention.diag.block_size", "must be <= 1048576"},
      {"model.channel_mixer.d_ff", "must be <= 1073741824"},
      {"model.attention.performer.features", "must be <= 1073741824"},
      {"model.num_classes", "must be <= 1073741824"},
      {"model.d_model", "must be <= 1073741824"},
      {"model.n_layers", "must be <= 4096"},
      {"model.max_positions", "must be <= 1048576"},
      {"model.vocab_size", "must be <= 2147483647"},
  };
  for (const auto& entry : keys) {  // no structured binding: INFO is a lambda (clang 14)
    const auto& key = entry.first;
    const auto& bound = entry.second;
    INFO(key);
    const std::string message = spec_error({key + "=" + huge});
    INFO(message);
    CHECK(message.find(key + ": " + bound + ", got " + huge) != std::string::npos);
    CHECK(message.find("--set") != std::string::npos);  // located at the override
  }
  // In the file: the file:line of the key.
  const std::string in_file = spec_error({}, kSpec + "");
  CHECK(in_file.empty());
  std::string text = kSpec;
  text.replace(text.find("  diag_layers: 1\n"), 16, "  diag_layers: 1\n  attention: {diag: {block_size: 4611686018427387904}}");
  const std::string located = spec_error({}, text);
  INFO(located);
  CHECK(located.find("spec.yaml:6:") != std::string::npos);
  CHECK(located.find("model.attention.diag.block_size: must be <= 1048576") != std::string::npos);
  // The bounds themselves are accepted.
  CHECK(spec_error({"model.attention.diag.block_size=1048576", "model.max_positions=1048576"}).empty());
}

TEST_CASE("spec sizes: train.update_freq is bounded (a step holds its batches at once)") {
  const std::string message = spec_error({"train.update_freq=1000000000"});
  INFO(message);
  CHECK(message.find("train.update_freq: must be <= 4096, got 1000000000") != std::string::npos);
  CHECK(message.find("train.batch_size") != std::string::npos);
  CHECK(spec_error({"train.update_freq=4096"}).empty());
}
