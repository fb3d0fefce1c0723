// Masked-LM pretraining and GLUE fine-tuning end to end through the CLI, on real WikiText raw
// text, the real GPT-2 BPE and real GLUE rows: a tiny encoder pretrains and resumes bit for bit,
// a fine-tune starts from it (train.init_from) and writes its predictions, `predict` writes a GLUE
// submission, and bad input is refused with exit 2 naming the file and line or the parameter.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/app/cli_runner.h"
#include "tests/app/tiny_spec.h"

using namespace tn::test;
using nlohmann::json;

namespace {

/// The first `n` lines of `path` (data root relative) into `out`, plus an optional extra line.
void head(const std::string& path, int n, const std::string& out, const std::string& extra = "") {
  std::ifstream in(data_root() + "/" + path);
  std::ofstream o(out);
  std::string line;
  for (int i = 0; i < n && std::getline(in, line); ++i) o << line << "\n";
  o << extra;
}

const std::string kEncoder =
    "  arch: encoder\n  d_model: 32\n  n_layers: 2\n  n_heads: 2\n  diag_layers: 1\n  max_positions: 64\n"
    "  attention: {norm_attention: {kernel: elu, norm: srmsnorm}, diag: {block_size: 16, inner: relu, norm: srmsnorm}}\n"
    "  prenorm: false\n  final_norm: false\n  positional: learned\n  embed_scale: false\n  embed_norm: layernorm\n"
    "  dropout: 0.1\n  attention_dropout: 0.1\n";

/// A tiny masked-LM pretraining on the first 400 lines of wiki.valid.raw.
std::string blm_spec(const std::string& dir) {
  head("wikitext-2-raw/wiki.valid.raw", 400, dir + "/small.raw");
  return "task: masked_lm\nmodel:\n  head: mlm\n" + kEncoder +
         "data: {train: " + dir + "/small.raw, split_valid_from_train: 0.1, seq_len: 64, tokenizer: gpt2}\n"
         "train: {batch_size: 8, max_steps: 12, seed: 3, log_every: 3, eval_every: 6,\n"
         "        optimizer: {name: adamw, lr: 2e-3}, schedule: {name: constant}}\n";
}

/// A tiny SST-2 fine-tune on the first rows of the real files, in its own GLUE folder `glue`.
std::string sst2_spec(const std::string& dir, const std::string& glue, const std::string& init_from) {
  std::filesystem::create_directories(glue);
  head("glue/SST-2/train.tsv", 301, glue + "/train.tsv");
  head("glue/SST-2/dev.tsv", 101, glue + "/dev.tsv");
  head("glue/SST-2/test.tsv", 41, glue + "/test.tsv");
  return "task: sentence_prediction\nmodel:\n  head: classification\n  pooling: cls\n" + kEncoder +
         "data: {reader: glue, task: SST-2, dir: " + glue + ", max_positions: 64}\n"
         "train: {batch_size: 16, max_steps: 20, seed: 3, log_every: 5, eval_every: 10," +
         (init_from.empty() ? "" : " init_from: " + init_from + ",") +
         "\n        optimizer: {name: adamw, lr: 1e-3}, schedule: {name: constant}}\n";
  (void)dir;
}

double valid_loss(const std::string& run) { return json::parse(slurp(run + "/summary.json"))["valid"]["loss"]; }

}  // namespace

TEST_CASE("cli: masked-LM pretraining trains, resumes bit for bit, and a fine-tune starts from it") {
  const std::string dir = scratch_dir("glue_mlm");
  write_text(dir + "/blm.yaml", blm_spec(dir));
  CliResult whole = run_cli("train " + dir + "/blm.yaml --out " + dir + "/blm", dir);
  INFO(whole.err);
  REQUIRE(whole.code == 0);
  const std::vector<std::pair<int64_t, double>> losses = train_losses(slurp(dir + "/blm/metrics.jsonl"));
  REQUIRE(losses.size() == 4);
  CHECK(losses.back().second < losses.front().second);
  const json s = json::parse(slurp(dir + "/blm/summary.json"));
  CHECK(s["valid"]["ppl"].get<double>() == doctest::Approx(std::exp(s["valid"]["loss"].get<double>())));
  CHECK(s["vocab_size"] == 50265);
  CHECK(s.contains("unigram_valid_ppl"));
  // 6 steps, then --resume to 12: the masks of every epoch and sample come from the seed.
  CliResult first = run_cli("train " + dir + "/blm.yaml --set train.max_steps=6 --out " + dir + "/parts", dir);
  REQUIRE(first.code == 0);
  CliResult second = run_cli("train " + dir + "/blm.yaml --resume --out " + dir + "/parts", dir);
  INFO(second.err);
  REQUIRE(second.code == 0);
  CHECK(valid_loss(dir + "/parts") == valid_loss(dir + "/blm"));
  CHECK(train_losses(slurp(dir + "/parts/metrics.jsonl")) == losses);

  // generate needs a decoder LM: an encoder's checkpoint is refused, saying so.
  CliResult gen = run_cli("generate --checkpoint " + dir + "/blm", dir);
  CHECK(gen.code == 2);
  CHECK(gen.err.find("holds an encoder") != std::string::npos);

  // Fine-tuning from it: the encoder is loaded, the classification head is new, the MLM head ignored.
  write_text(dir + "/sst2.yaml", sst2_spec(dir, dir + "/glue", dir + "/blm"));
  CliResult tune = run_cli("train " + dir + "/sst2.yaml --out " + dir + "/sst2", dir);
  INFO(tune.err);
  REQUIRE(tune.code == 0);
  CHECK(tune.err.find("init_from " + dir + "/blm/checkpoint.safetensors:") != std::string::npos);
  // head.dense is in both heads: initialised anew, and listed once, not as new and ignored both.
  CHECK(tune.err.find("new: head.out_proj.bias, head.out_proj.weight;") != std::string::npos);
  CHECK(tune.err.find("initialised anew (the checkpoint's head is another): head.dense.bias, head.dense.weight;") !=
        std::string::npos);
  CHECK(tune.err.find("ignored: head.bias, head.layer_norm.bias, head.layer_norm.weight") != std::string::npos);
  CHECK(tune.err.find("% of the training positions are padding") != std::string::npos);
  const json t = json::parse(slurp(dir + "/sst2/summary.json"));
  CHECK(t["valid"].contains("accuracy"));
  CHECK(t["valid"]["examples"] == 100);
  CHECK(t.contains("majority_valid_accuracy"));
  // predictions/valid.jsonl: one line per dev example, with id, label, prediction and score.
  std::istringstream lines(slurp(dir + "/sst2/predictions/valid.jsonl"));
  int64_t n = 0, right = 0;
  for (std::string line; std::getline(lines, line); ++n) {
    const json p = json::parse(line);
    REQUIRE(p.contains("score"));
    right += p["label"] == p["prediction"];
  }
  CHECK(n == 100);
  CHECK(static_cast<double>(right) / 100 == doctest::Approx(t["valid"]["accuracy"].get<double>()));

  // predict writes the GLUE submission of the test split.
  CliResult pred = run_cli("predict " + dir + "/sst2 --split test", dir);
  INFO(pred.err);
  REQUIRE(pred.code == 0);
  const std::string tsv = slurp(dir + "/sst2/submission/SST-2.tsv");
  CHECK(tsv.rfind("index\tprediction\n0\t", 0) == 0);
  CHECK(std::count(tsv.begin(), tsv.end(), '\n') == 41);  // header + 40 rows
  CHECK(json::parse(pred.out)["files"][0] == dir + "/sst2/submission/SST-2.tsv");

  // A pretrained model of another size: exit 2 naming the parameter; nothing is written.
  CliResult wide = run_cli("train " + dir + "/sst2.yaml --set model.d_model=64 --out " + dir + "/wide", dir);
  CHECK(wide.code == 2);
  CHECK(wide.err.find("parameter embed_norm.bias has shape [32] in the checkpoint but [64] in this model") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir + "/wide/checkpoint.safetensors"));
  CliResult missing = run_cli("train " + dir + "/sst2.yaml --set train.init_from=" + dir + "/nope --out " + dir + "/x", dir);
  CHECK(missing.code == 2);
  CHECK(missing.err.find("train.init_from") != std::string::npos);
  // predict on a language-model run: no per-example predictions.
  CliResult lm = run_cli("predict " + dir + "/blm", dir);
  CHECK(lm.code == 2);
}

TEST_CASE("cli: bad GLUE and BPE input is refused with exit 2 and the file and line") {
  const std::string dir = scratch_dir("glue_bad");
  const std::string glue = dir + "/glue";
  write_text(dir + "/sst2.yaml", sst2_spec(dir, glue, ""));
  auto refused = [&](const std::string& set, const std::string& text) {
    CliResult r = run_cli("train " + dir + "/sst2.yaml " + set + " --out " + dir + "/run", dir);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(text) != std::string::npos);
  };
  head("glue/SST-2/dev.tsv", 5, glue + "/columns.tsv", "a sentence with no label\n");
  refused("--set data.valid=columns.tsv", glue + "/columns.tsv:6: expected 2 tab-separated columns, found 1");
  head("glue/SST-2/dev.tsv", 3, glue + "/label.tsv", "a fine film\tpositive\n");
  refused("--set data.valid=label.tsv", glue + "/label.tsv:4: unknown label");
  head("glue/SST-2/dev.tsv", 2, glue + "/utf8.tsv", "caf\xE9 noir\t1\n");
  refused("--set data.valid=utf8.tsv", glue + "/utf8.tsv:3");
  write_text(glue + "/empty.tsv", "");
  refused("--set data.valid=empty.tsv", glue + "/empty.tsv");
  // The BPE files: a missing encoder.json, a corrupt vocab.bpe, a dictionary of another vocabulary.
  std::filesystem::create_directories(dir + "/bpe");
  refused("--set data.bpe_dir=" + dir + "/bpe", dir + "/bpe/encoder.json");
  std::filesystem::copy_file(data_root() + "/gpt2_bpe/encoder.json", dir + "/bpe/encoder.json");
  head("gpt2_bpe/vocab.bpe", 10, dir + "/bpe/vocab.bpe", "Ġ\n");
  refused("--set data.bpe_dir=" + dir + "/bpe", dir + "/bpe/vocab.bpe:11");
  head("gpt2_bpe/dict.txt", 100, dir + "/dict.txt");
  refused("--set data.dict=" + dir + "/dict.txt", dir + "/dict.txt");
}

TEST_CASE("scripts/format_mrpc.sh builds GLUE's MRPC files byte for byte from Microsoft's") {
  const std::string dir = scratch_dir("mrpc");
  const std::string cmd = "bash '" + source_dir() + "/scripts/format_mrpc.sh' '" + data_root() + "/glue/MRPC' '" + dir + "'";
  REQUIRE(std::system(cmd.c_str()) == 0);
  for (const char* f : {"train.tsv", "dev.tsv", "test.tsv"}) {
    INFO(f);
    CHECK(slurp(dir + "/" + f) == slurp(data_root() + "/glue/MRPC/" + f));
  }
}
