// `transnormer generate` end to end: a tiny T1 model trained for a few steps on WikiText-103 writes
// a checkpoint with its vocabulary; generate continues a prompt with N words (greedy and seeded
// sampling reproducible, --json and plain text agree), and bad input exits 2 with a clear message.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <sstream>

#include "tests/app/cli_runner.h"

using namespace tn::test;
using nlohmann::json;

namespace {

/// Trains the tiny T1 decoder once per process; returns its checkpoint path.
const std::string& tiny_checkpoint() {
  static const std::string path = [] {
    const std::string dir = scratch_dir("generate_train");
    write_text(dir + "/tiny.yaml",
               "model:\n  arch: decoder\n  d_model: 32\n  n_layers: 2\n  n_heads: 2\n  diag_layers: 1\n"
               "  attention: {norm_attention: {kernel: elu, norm: srmsnorm}, diag: {block_size: 8, inner: relu, norm: srmsnorm}}\n"
               "data:\n  train: wikitext-103/wiki.valid.tokens\n  split_valid_from_train: 0.05\n  seq_len: 32\n"
               "train:\n  batch_size: 2\n  max_steps: 3\n  eval_every: 100\n");
    const CliResult r = run_cli("train " + dir + "/tiny.yaml --out " + dir + "/run", dir);
    INFO(r.err);
    REQUIRE(r.code == 0);
    return dir + "/run/checkpoint.safetensors";
  }();
  return path;
}

size_t count_words(const std::string& text) {
  std::istringstream in(text);
  std::string word;
  size_t n = 0;
  while (in >> word) ++n;
  return n;
}

}  // namespace

TEST_CASE("cli: generate prints N words, --json agrees, greedy and seeded sampling are reproducible") {
  const std::string ckpt = tiny_checkpoint();
  const std::string dir = scratch_dir("generate");
  const std::string base = "generate --checkpoint '" + ckpt + "' --prompt 'the game was' ";

  CliResult j = run_cli(base + "--max-new-tokens 12 --temperature 0 --json", dir);
  INFO(j.err);
  REQUIRE(j.code == 0);
  const json out = json::parse(j.out);
  REQUIRE(out["ids"].size() == 12);
  CHECK(out["prompt_ids"].size() == 3);
  CHECK(out["ms_per_token"].get<double>() > 0.0);
  CHECK(j.err.find("ms/token") != std::string::npos);  // timings go to stderr
  size_t words = 0;
  for (const auto& id : out["ids"]) words += id.get<int>() != 1;  // <eos> prints as a line break
  CHECK(count_words(out["text"].get<std::string>()) == words);

  // Plain text: the same words on stdout, nothing else.
  CliResult p = run_cli(base + "--max-new-tokens 12 --temperature 0", dir);
  REQUIRE(p.code == 0);
  CHECK(count_words(p.out) == words);
  std::string expected = out["text"].get<std::string>();
  if (expected.empty() || expected.back() != '\n') expected += '\n';
  CHECK(p.out == expected);
  CHECK(run_cli(base + "--max-new-tokens 12 --temperature 0 --json", dir).out.find(out["text"].dump()) != std::string::npos);

  // Seeded sampling reproduces itself.
  const std::string sample = base + "--max-new-tokens 15 --temperature 1 --top-k 20 --seed 7 --json";
  const json s1 = json::parse(run_cli(sample, dir).out), s2 = json::parse(run_cli(sample, dir).out);
  CHECK(s1["ids"] == s2["ids"]);
  CHECK(s1["ids"].size() == 15);

  // An empty prompt starts from <eos>; unknown words become <unk>.
  const json empty = json::parse(
      run_cli("generate --checkpoint '" + ckpt + "' --max-new-tokens 3 --json", dir).out);
  CHECK(empty["prompt_ids"] == json::array({1}));
  CHECK(empty["ids"].size() == 3);
  const json unknown = json::parse(run_cli("generate --checkpoint '" + ckpt +
                                               "' --prompt 'qqzzxxnotaword the' --max-new-tokens 0 --json",
                                           dir)
                                       .out);
  CHECK(unknown["prompt_ids"][0] == 2);
  CHECK(unknown["ids"].empty());

  // The run directory stands for its checkpoint.
  const std::string run_dir = std::filesystem::path(ckpt).parent_path().string();
  const json by_dir = json::parse(run_cli("generate --checkpoint '" + run_dir + "' --max-new-tokens 3 --json", dir).out);
  CHECK(by_dir["ids"] == empty["ids"]);
}

TEST_CASE("cli: generate rejects bad input with exit code 2") {
  const std::string ckpt = tiny_checkpoint();
  const std::string dir = scratch_dir("generate_bad");
  CliResult missing = run_cli("generate --checkpoint " + dir + "/nope.safetensors", dir);
  CHECK(missing.code == 2);
  CHECK(missing.err.find("nope.safetensors") != std::string::npos);

  // The golden fixtures hold weights but no vocabulary.
  CliResult no_vocab = run_cli("generate --checkpoint '" + golden_root() + "/dec_t1/model.safetensors'", dir);
  CHECK(no_vocab.code == 2);
  CHECK(no_vocab.err.find("transnormer.vocab") != std::string::npos);

  const std::string base = "generate --checkpoint '" + ckpt + "' ";
  for (const char* args : {"--max-new-tokens -1", "--max-new-tokens=-1"}) {
    CliResult r = run_cli(base + args, dir);
    CAPTURE(args);
    CHECK(r.code == 2);
    CHECK(r.err.find("--max-new-tokens") != std::string::npos);
  }
  CliResult temperature = run_cli(base + "--temperature=-0.5", dir);
  CHECK(temperature.code == 2);
  CHECK(temperature.err.find("--temperature") != std::string::npos);
  CliResult top_k = run_cli(base + "--top-k=-3", dir);
  CHECK(top_k.code == 2);
  CHECK(top_k.err.find("--top-k") != std::string::npos);
  CHECK(run_cli(base + "--max-new-tokens lots", dir).code == 2);
  CliResult seed = run_cli(base + "--seed -1", dir);  // not wrapped to 2^64 - 1
  CHECK(seed.code == 2);
  CHECK(seed.err.find("--seed: Value -1 is not a whole number from 0 to 18446744073709551615") != std::string::npos);
  // A prompt that is not UTF-8 (Latin-1 "caf\xe9"), refused as tokenize refuses it.
  CliResult latin1 = run_cli(base + "--prompt \"$(printf 'caf\\351')\"", dir);  // sh's printf: octal
  CHECK(latin1.code == 2);
  CHECK(latin1.err.find("--prompt: byte 3 is not UTF-8") != std::string::npos);
}

TEST_CASE("cli: generate bounds --max-new-tokens, even where positions never end (sinusoidal)") {
  // 2^63 - 1 new tokens on a sinusoidal model ended in a raw `vector::reserve` exception (exit 1).
  // The model: two steps on a corpus written here (no data root needed).
  const std::string dir = scratch_dir("generate_max_tokens");
  std::string corpus;
  for (int line = 0; line < 60; ++line) corpus += "the game was a game of the year and a game to play\n";
  write_text(dir + "/words.tokens", corpus);
  write_text(dir + "/tiny.yaml",
             "model: {arch: decoder, d_model: 16, n_layers: 1, n_heads: 2, positional: sinusoidal}\n"
             "data: {train: " + dir + "/words.tokens, split_valid_from_train: 0.1, seq_len: 16}\n"
             "train: {batch_size: 2, max_steps: 2}\n");
  const CliResult trained = run_cli("train " + dir + "/tiny.yaml --out " + dir + "/run", dir);
  INFO(trained.err);
  REQUIRE(trained.code == 0);
  const std::string ckpt = dir + "/run/checkpoint.safetensors";
  const CliResult r = run_cli("generate --checkpoint '" + ckpt + "' --max-new-tokens 9223372036854775807", dir);
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find("--max-new-tokens 9223372036854775807 is more than the 1048576 tokens one call generates") !=
        std::string::npos);
  CHECK(r.err.find("vector") == std::string::npos);
}
