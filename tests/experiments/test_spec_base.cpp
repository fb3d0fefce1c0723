// base: chains (experiments/spec/spec_yaml.cpp compose): a long chain is refused as too long, not
// called a cycle; a base file that is not a mapping is refused at the base: line; an empty one
// adds nothing.
#include <doctest/doctest.h>

#include <string>

#include "core/error.h"
#include "experiments/spec/spec.h"
#include "tests/temp_dir.h"

using namespace tn;

namespace {
const std::string kSpec =
    "model: {d_model: 64, n_layers: 2, n_heads: 4}\n"
    "data: {train: train.tokens, seq_len: 32}\n"
    "train: {max_steps: 10, optimizer: {lr: 1e-3}}\n";

/// Writes s0.yaml .. s<n>.yaml, each s<i> with base: s<i+1>.yaml and the last the full spec.
void write_chain(const test::TempDir& dir, int n) {
  for (int i = 0; i < n; ++i)
    dir.write("s" + std::to_string(i) + ".yaml",
              "base: s" + std::to_string(i + 1) + ".yaml\ntrain: {seed: " + std::to_string(i + 1) + "}\n");
  dir.write("s" + std::to_string(n) + ".yaml", kSpec);
}

std::string error_of(const std::string& path) {
  try {
    load_spec(path);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("spec base: a chain of 33 files loads, a chain of 40 is too long and not a cycle") {
  test::TempDir dir("spec_base");
  write_chain(dir, 32);
  const ExperimentSpec spec = load_spec(dir.file("s0.yaml"));
  CHECK(spec.train.seed == 1);  // the first file of the chain wins
  CHECK(spec.model.d_model == 64);

  test::TempDir longer("spec_base");
  write_chain(longer, 39);
  const std::string message = error_of(longer.file("s0.yaml"));
  INFO(message);
  CHECK(message.find("cycle") == std::string::npos);
  CHECK(message.find("more than 33") != std::string::npos);
  CHECK(message.find("s32.yaml:1") != std::string::npos);  // at the base: line that goes too far
}

TEST_CASE("spec base: a scalar base document is refused, an empty one adds nothing") {
  test::TempDir dir("spec_base");
  dir.write("scalar.yaml", "just a string\n");
  dir.write("top.yaml", "base: scalar.yaml\n" + kSpec);
  const std::string message = error_of(dir.file("top.yaml"));
  INFO(message);
  CHECK(message.find("top.yaml:1") != std::string::npos);
  CHECK(message.find("not a spec") != std::string::npos);

  dir.write("empty.yaml", "");
  dir.write("on_empty.yaml", "base: empty.yaml\n" + kSpec);
  CHECK(load_spec(dir.file("on_empty.yaml")).model.d_model == 64);
}

TEST_CASE("spec base: paper values are the spec's own: a spec's paper: replaces its base's, {} clears them") {
  test::TempDir dir("spec_base");
  dir.write("t1.yaml", kSpec + "paper: {test.accuracy: 0.4103, valid.accuracy: 0.42}\n");
  dir.write("inherits.yaml", "base: t1.yaml\ntrain: {max_steps: 5}\n");
  dir.write("cleared.yaml", "base: t1.yaml\npaper: {}\n");
  dir.write("nulled.yaml", "base: t1.yaml\npaper: null\n");
  dir.write("own.yaml", "base: t1.yaml\npaper: {test.accuracy: 0.3837}\n");
  CHECK(load_spec(dir.file("inherits.yaml")).paper == std::map<std::string, double>{{"test.accuracy", 0.4103},
                                                                                     {"valid.accuracy", 0.42}});
  CHECK(load_spec(dir.file("cleared.yaml")).paper.empty());
  CHECK(load_spec(dir.file("nulled.yaml")).paper.empty());
  // Not merged: the base's valid.accuracy does not describe this spec's model either.
  CHECK(load_spec(dir.file("own.yaml")).paper == std::map<std::string, double>{{"test.accuracy", 0.3837}});
}
