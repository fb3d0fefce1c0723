// Hostile sizes through the binary (hostile-input campaign, class 1): a checkpoint whose stored
// config says channel_mixer.d_ff, num_classes, attention.performer.features or
// attention.diag.block_size is 2^62 (or d_ff 10^7 in a file of 800 KB) exits 2 from eval, forward,
// generate, analyze locality and predict with one message naming the file, never a segfault,
// heap corruption or gigabytes; the same values given to train and bench by --set, and
// train.update_freq 10^9, exit 2 at the key. Each command runs under `ulimit -v 3 GB`.
#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/platform/io/safetensors.h"
#include "tests/app/cli_runner.h"

using namespace tn::test;
using nlohmann::json;

namespace {

constexpr int64_t k2to62 = int64_t{1} << 62;

/// dec_t1's tensors, with a vocabulary of its 100 rows, its stored config changed by `edit`.
std::string crafted_checkpoint(const std::string& dir, const std::string& name, const std::function<void(json&)>& edit) {
  const tn::SafetensorsFile file = tn::load_safetensors(golden_root() + "/dec_t1/model.safetensors");
  json config = json::parse(file.metadata.at("transnormer.config"));
  edit(config);
  std::map<std::string, std::string> metadata = file.metadata;
  metadata["transnormer.config"] = config.dump();
  std::vector<std::string> vocab = {"<pad>", "<eos>", "<unk>"};
  while (vocab.size() < 100) vocab.push_back("w" + std::to_string(vocab.size()));
  metadata["transnormer.vocab"] = json(vocab).dump();
  const std::string path = dir + "/" + name + ".safetensors";
  tn::save_safetensors(path, file.tensors, metadata);
  return path;
}

/// `transnormer <args>` with at most 3 GB of address space.
CliResult run_bounded(const std::string& args, const std::string& dir) {
  return run_command_line("ulimit -v 3000000; OMP_NUM_THREADS=2 '" + binary() + "' " + args, dir + "/stdout.txt",
                          dir + "/stderr.txt");
}

}  // namespace

TEST_CASE("cli hostile sizes: a checkpoint config with overflowing or oversized sizes exits 2 from every verb") {
  const std::string dir = scratch_dir("hostile_checkpoints");
  write_text(dir + "/words.tokens", "w3 w4 w5 w6 w7 w8 w9 w10\nw11 w12 w3 w4 w5 w6 w7 w8\n");
  write_text(dir + "/input.json", "{\"task\": \"lm\", \"batch\": 1, \"seq_len\": 4, \"tokens\": [[1, 2, 3, 4]]}");
  const std::vector<std::pair<std::string, std::function<void(json&)>>> cases = {
      {"d_ff_2e62", [](json& c) { c["channel_mixer"]["d_ff"] = k2to62; }},
      {"d_ff_2e59", [](json& c) { c["channel_mixer"]["d_ff"] = (int64_t{1} << 59) + 12345; }},
      {"d_ff_1e7", [](json& c) { c["channel_mixer"]["d_ff"] = 10000000; }},
      {"num_classes_2e62", [](json& c) { c["num_classes"] = k2to62; }},
      {"features_2e62",
       [](json& c) {
         c["layers"][2] = "performer";
         c["attention"]["performer"]["features"] = k2to62;
       }},
      {"block_size_2e62", [](json& c) { c["attention"]["diag"]["block_size"] = k2to62; }},
  };
  for (const auto& [name, edit] : cases) {
    const std::string ckpt = crafted_checkpoint(dir, name, edit);
    for (const std::string& verb :
         {"eval --checkpoint " + ckpt + " --data " + dir + "/words.tokens --seq-len 4",
          "forward --checkpoint " + ckpt + " --input " + dir + "/input.json",
          "generate --checkpoint " + ckpt + " --max-new-tokens 3",
          "analyze locality --checkpoint " + ckpt + " --data " + dir + "/words.tokens --seq-len 4 --out " + dir + "/loc"}) {
      INFO(verb);
      const CliResult r = run_bounded(verb, dir);
      INFO(r.err);
      CHECK(r.code == 2);
      CHECK(r.err.find(ckpt) != std::string::npos);
      CHECK(r.err.find("lower the batch") == std::string::npos);
    }
  }
}

TEST_CASE("cli hostile sizes: train and bench refuse oversized sizes at the key, before the first step") {
  const std::string dir = scratch_dir("hostile_spec_sizes");
  std::string corpus;
  for (int line = 0; line < 40; ++line) corpus += "the game was a game of the year and a game to play\n";
  write_text(dir + "/words.tokens", corpus);
  write_text(dir + "/tiny.yaml",
             "model: {arch: decoder, d_model: 16, n_layers: 2, n_heads: 2, diag_layers: 1}\n"
             "data: {train: " + dir + "/words.tokens, split_valid_from_train: 0.1, seq_len: 16}\n"
             "train: {batch_size: 2, max_steps: 2}\n");
  const std::vector<std::pair<std::string, std::string>> sets = {
      {"model.attention.diag.block_size=4611686018427387904", "model.attention.diag.block_size: must be <= 1048576"},
      {"model.channel_mixer.d_ff=4611686018427387904", "model.channel_mixer.d_ff: must be <= 1073741824"},
      {"train.update_freq=1000000000", "train.update_freq: must be <= 4096"},
  };
  for (const auto& [set, expected] : sets) {
    for (const std::string& verb : {"train " + dir + "/tiny.yaml --out " + dir + "/run --set " + set,
                                    "train " + dir + "/tiny.yaml --dry-run --set " + set}) {
      INFO(verb);
      const CliResult r = run_bounded(verb, dir);
      INFO(r.err);
      CHECK(r.code == 2);
      CHECK(r.err.find(expected) != std::string::npos);
    }
  }
  const CliResult bench = run_bounded("bench " + dir + "/tiny.yaml --vocab 50 --batch 2 --seq-len 16 --steps 1 --probe-size 0 "
                                      "--set model.attention.diag.block_size=4611686018427387904", dir);
  INFO(bench.err);
  CHECK(bench.code == 2);
  CHECK(bench.err.find("model.attention.diag.block_size: must be <= 1048576") != std::string::npos);
  // Below the bound, a block longer than every sequence trains (one block of the sequence).
  const CliResult wide = run_bounded("train " + dir + "/tiny.yaml --out " + dir + "/wide --set model.attention.diag.block_size=1000000", dir);
  INFO(wide.err);
  CHECK(wide.code == 0);
}

TEST_CASE("cli hostile sizes: forward's input sizes are bounded before anything is reserved") {
  // "seq_len": 2^62 with one short row ended in a raw `vector::reserve` exception (exit 1).
  const std::string dir = scratch_dir("hostile_forward_input");
  const std::string model = golden_root() + "/dec_t1/model.safetensors";
  for (const std::string& sizes : {"\"batch\": 1, \"seq_len\": 4611686018427387904",
                                   "\"batch\": 4611686018427387904, \"seq_len\": 2"}) {
    INFO(sizes);
    write_text(dir + "/input.json", "{\"task\": \"lm\", " + sizes + ", \"tokens\": [[1, 2]], \"targets\": [[1, 2]]}");
    const CliResult r = run_bounded("forward --checkpoint '" + model + "' --input " + dir + "/input.json", dir);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(dir + "/input.json") != std::string::npos);
    CHECK(r.err.find("must be a positive integer up to 1048576") != std::string::npos);
  }
}

TEST_CASE("cli hostile sizes: a stored config that is not JSON is named with its line and column, not the library's tag") {
  const std::string dir = scratch_dir("hostile_config_json");
  const tn::SafetensorsFile file = tn::load_safetensors(golden_root() + "/dec_t1/model.safetensors");
  std::map<std::string, std::string> metadata = file.metadata;
  metadata["transnormer.config"] = "{\"d_model\": ";
  const std::string ckpt = dir + "/cut_config.safetensors";
  tn::save_safetensors(ckpt, file.tensors, metadata);
  write_text(dir + "/input.json", "{\"task\": \"lm\", \"batch\": 1, \"seq_len\": 4, \"tokens\": [[1, 2, 3, 4]]}");
  const CliResult r = run_bounded("forward --checkpoint " + ckpt + " --input " + dir + "/input.json", dir);
  CHECK(r.code == 2);
  CHECK(r.err.find(ckpt + ": \"transnormer.config\" in the safetensors metadata is not valid JSON at line 1, column 13") !=
        std::string::npos);
  CHECK(r.err.find("json.exception") == std::string::npos);
}
