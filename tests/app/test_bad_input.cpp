// Bad input exits with code 2 and one clear message naming the file, line or key, and never
// crashes: malformed YAML, unknown key, wrong type, out-of-range value, missing data file,
// corrupt checkpoint, bad CLI arguments.
#include <doctest/doctest.h>

#include "tests/app/cli_runner.h"
#include "tests/app/tiny_spec.h"

using namespace tn::test;

namespace {
const char* kGood =
    "model:\n  arch: decoder\n  d_model: 32\n  n_layers: 2\n  n_heads: 2\n"
    "data:\n  train: wikitext-103/wiki.valid.tokens\n  split_valid_from_train: 0.1\n  seq_len: 32\n"
    "train:\n  batch_size: 2\n  max_steps: 2\n";

CliResult train_with(const std::string& name, const std::string& yaml) {
  const std::string dir = scratch_dir("bad_" + name);
  write_text(dir + "/" + name + ".yaml", yaml);
  return run_cli("train " + dir + "/" + name + ".yaml --out " + dir + "/run", dir);
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}
}  // namespace

TEST_CASE("bad input: malformed YAML reports file:line") {
  CliResult r = train_with("malformed", replaced(kGood, "  n_heads: 2\n", "  n_heads: [2\n"));
  CHECK(r.code == 2);
  CHECK(r.err.find("malformed.yaml:") != std::string::npos);
}

TEST_CASE("bad input: unknown key names the nearest valid key") {
  CliResult r = train_with("unknown", replaced(kGood, "d_model: 32", "d_modle: 32"));
  CHECK(r.code == 2);
  CHECK(r.err.find("unknown.yaml:3") != std::string::npos);
  CHECK(r.err.find("d_model") != std::string::npos);
}

TEST_CASE("bad input: wrong type and out-of-range values") {
  CliResult r = train_with("type", replaced(kGood, "n_layers: 2", "n_layers: two"));
  CHECK(r.code == 2);
  CHECK(r.err.find("n_layers") != std::string::npos);
  CliResult d = train_with("divisible", replaced(kGood, "n_heads: 2", "n_heads: 3"));
  CHECK(d.code == 2);
  CHECK(d.err.find("divisible") != std::string::npos);
}

TEST_CASE("bad input: train --threads is not reported as a --set the user never typed") {
  const std::string dir = scratch_dir("bad_threads");
  write_text(dir + "/t.yaml", replaced(kGood, "train:\n  batch_size: 2\n  max_steps: 2\n", "train: 5\n"));
  CliResult r = run_cli("train " + dir + "/t.yaml --threads 1 --out " + dir + "/run", dir);
  CHECK(r.code == 2);
  CHECK(r.err.find("t.yaml:10: train: expected a mapping") != std::string::npos);
  CHECK(r.err.find("--set") == std::string::npos);
}

TEST_CASE("bad input: forward --input that is not JSON names line and column, not the library's exception") {
  const std::string dir = scratch_dir("bad_forward_json");
  write_text(dir + "/cut.json", "{\"task\": \"lm\", \"batch\": ");  // ends after 24 characters
  CliResult r = run_cli("forward --checkpoint '" + golden_root() + "/dec_t1/model.safetensors' --input " + dir + "/cut.json", dir);
  CHECK(r.code == 2);
  CHECK(r.err.find("cut.json: not valid JSON at line 1, column 25: unexpected end of input") != std::string::npos);
  CHECK(r.err.find("json.exception") == std::string::npos);
}

TEST_CASE("bad input: a data path at a device or a directory is refused at once, naming it") {
  CliResult r = train_with("device", replaced(kGood, "wikitext-103/wiki.valid.tokens", "/dev/zero"));
  CHECK(r.code == 2);  // it read /dev/zero until memory ran out
  CHECK(r.err.find("/dev/zero: it is a device, not a file") != std::string::npos);
}

TEST_CASE("bad input: a missing data file is named") {
  CliResult r = train_with("nodata", replaced(kGood, "wiki.valid.tokens", "wiki.nothere.tokens"));
  CHECK(r.code == 2);
  CHECK(r.err.find("wiki.nothere.tokens") != std::string::npos);
}

TEST_CASE("bad input: corrupt and foreign checkpoints") {
  const std::string dir = scratch_dir("bad_ckpt");
  write_text(dir + "/corrupt.safetensors", "\x10\x00\x00\x00\x00\x00\x00\x00{\"a\": garbage");
  write_text(dir + "/input.json", "{\"task\": \"lm\"}");
  CliResult r = run_cli("forward --checkpoint " + dir + "/corrupt.safetensors --input " + dir + "/input.json", dir);
  CHECK(r.code == 2);
  CHECK(r.err.find("corrupt.safetensors") != std::string::npos);
  CliResult e = run_cli("eval --checkpoint " + dir + "/missing.safetensors --data x --seq-len 4", dir);
  CHECK(e.code == 2);
  CHECK(e.err.find("missing.safetensors") != std::string::npos);
  // A valid checkpoint with a malformed input.json names the input file.
  CliResult g = run_cli("forward --checkpoint '" + golden_root() + "/dec_t1/model.safetensors' --input " + dir + "/input.json", dir);
  CHECK(g.code == 2);
  CHECK(g.err.find("input.json") != std::string::npos);
}

TEST_CASE("bad input: unknown verb and bad flags exit 2") {
  const std::string dir = scratch_dir("bad_cli");
  CHECK(run_cli("fly", dir).code == 2);
  CHECK(run_cli("train", dir).code == 2);
  CHECK(run_cli("eval --split middle x", dir).code == 2);
  // CLI11 says "Value abc not in range 0 to 1024" for a word: it is no number at all.
  CliResult t = run_cli("train x.yaml --threads abc", dir);
  CHECK(t.code == 2);
  CHECK(t.err.find("--threads: 'abc' is not a number; give a whole number from 0 to 1024") != std::string::npos);
  CliResult b = run_cli("bench x.yaml --scaling-max-gib lots", dir);
  CHECK(b.code == 2);
  CHECK(b.err.find("'lots' is not a number; give a number from 0.001 to 1024") != std::string::npos);
  CliResult big = run_cli("train x.yaml --threads 5000", dir);  // a number out of range keeps CLI11's words
  CHECK(big.code == 2);
  CHECK(big.err.find("Value 5000 not in range 0 to 1024") != std::string::npos);
  // report's lists: an empty one is refused naming the flag; spaces after commas and repeats are read away.
  const std::string lra = std::string(TN_SOURCE_DIR) + "/docs/results/lra/runs";
  CliResult empty_label = run_cli("report " + lra + " --out " + dir + "/rep --label ''", dir);
  CHECK(empty_label.code == 2);
  CHECK(empty_label.err.find("--label is empty") != std::string::npos);
  CHECK(run_cli("report " + lra + " --out " + dir + "/rep --metrics 'test.accuracy, valid.accuracy' --columns "
                "token_mixer,token_mixer", dir).code == 0);
  CHECK(slurp(dir + "/rep/report.md").find("| token_mixer | test.accuracy |") != std::string::npos);
  CliResult half = run_cli("report x --watch 1.5", dir);  // in range, but whole seconds are asked
  CHECK(half.code == 2);
  CHECK(half.err.find("--watch: '1.5' is not a whole number; give a whole number from 1 to 86400") != std::string::npos);
  // Hydra's overrides: the --set (or, for a list, the sweep's --grid) that says each here, in order.
  CliResult hydra = run_cli("train x.yaml train.max_steps=5 +model.d_model=64", dir);
  CHECK(hydra.code == 2);
  CHECK(hydra.err.find("overridden with --set key=value") != std::string::npos);
  CHECK(hydra.err.find(": --set train.max_steps=5 --set model.d_model=64\n") != std::string::npos);
  // fairseq's and Lightning's flags: the --set or --smoke that says them here, in the order typed.
  CliResult flag = run_cli("train x.yaml --max_steps 5", dir);
  CHECK(flag.code == 2);
  CHECK(flag.err.find("The following arguments were not expected: --max_steps 5\nSpec values are set with --set "
                      "here: --set train.max_steps=5") != std::string::npos);
  CHECK(run_cli("train x.yaml --seed=3", dir).err.find("--set train.seed=3") != std::string::npos);
  CHECK(run_cli("train x.yaml --fast_dev_run", dir).err.find("A smoke test is --smoke here") != std::string::npos);
  CHECK(run_cli("train --config-name quickstart", dir).err.find("The spec is the first argument here") !=
        std::string::npos);
  CliResult multirun = run_cli("sweep x.yaml train.seed=1,2", dir);
  CHECK(multirun.code == 2);
  CHECK(multirun.err.find("The following argument was not expected: --grid train.seed=1,2") == std::string::npos);
  CHECK(multirun.err.find("The following argument was not expected: train.seed=1,2\n") != std::string::npos);
  CHECK(multirun.err.find(": --grid train.seed=1,2\n") != std::string::npos);
  // train takes one value per key: a list is a sweep.
  CliResult list = run_cli("train x.yaml model.token_mixer=softmax,linear", dir);
  CHECK(list.code == 2);
  CHECK(list.err.find("A list of values is a sweep (Hydra's multirun): transnormer sweep SPEC.yaml --grid "
                      "model.token_mixer=softmax,linear") != std::string::npos);
  // Hydra's -m: a sweep, named as such.
  CliResult dash_m = run_cli("train x.yaml -m train.seed=1,2", dir);
  CHECK(dash_m.code == 2);
  CHECK(dash_m.err.find("A list of values is a sweep (Hydra's multirun, -m): transnormer sweep SPEC.yaml --grid "
                        "train.seed=1,2") != std::string::npos);
  CliResult hydra_dir = run_cli("train x.yaml hydra.run.dir=/tmp/somewhere", dir);
  CHECK(hydra_dir.code == 2);
  CHECK(hydra_dir.err.find("The output folder is --out here: --out /tmp/somewhere") != std::string::npos);
  // A verb without --set: its own option, where one matches the key.
  CliResult eval_split = run_cli("eval runs/x split=test", dir);
  CHECK(eval_split.code == 2);
  CHECK(eval_split.err.find("`eval` takes options, not key=value overrides: --split test") != std::string::npos);
  CHECK(eval_split.err.find("--set") == std::string::npos);
  CliResult generate_k = run_cli("generate --checkpoint runs/x top_k=5", dir);
  CHECK(generate_k.code == 2);
  CHECK(generate_k.err.find("--set") == std::string::npos);
  CHECK(generate_k.err.find(": --top-k 5") != std::string::npos);  // top_k names --top-k
  // Hydra's switches alone: --multirun to sweep (which needs none), --cfg job to verbs without it.
  CliResult sweep_m = run_cli("sweep x.yaml --multirun", dir);
  CHECK(sweep_m.code == 2);
  CHECK(sweep_m.err.find("`sweep` runs every point of its file and of its --grid axes already: leave out "
                         "-m/--multirun") != std::string::npos);
  CliResult train_m = run_cli("train x.yaml -m", dir);
  CHECK(train_m.code == 2);
  CHECK(train_m.err.find("a multirun is a sweep: transnormer sweep SPEC.yaml --grid key=v1,v2") != std::string::npos);
  CliResult sweep_cfg = run_cli("sweep x.yaml --cfg job", dir);
  CHECK(sweep_cfg.code == 2);
  CHECK(sweep_cfg.err.find("`sweep` has no --cfg: `transnormer sweep FILE --dry-run` lists every point") !=
        std::string::npos);
  CliResult eval_cfg = run_cli("eval runs/x --cfg job", dir);
  CHECK(eval_cfg.code == 2);
  CHECK(eval_cfg.err.find("a run's resolved spec is RUN_DIR/config.yaml") != std::string::npos);
  // report's folders: a key=value that names none is an option written as Hydra writes it.
  CliResult report_metrics = run_cli("report " + dir + " metrics=test.ppl", dir);
  CHECK(report_metrics.code == 2);
  CHECK(report_metrics.err.find("metrics=test.ppl: no such folder; `report` takes options, not key=value "
                                "overrides: --metrics test.ppl") != std::string::npos);
  CliResult twice = run_cli("train x.yaml --threads 1 --threads 2", dir);
  CHECK(twice.code == 2);
  CHECK(twice.err.find("--threads is given 2 times; give it once (one value)") != std::string::npos);
  CliResult other = run_cli("train x.yaml extra", dir);  // not an override: CLI11's words alone
  CHECK(other.code == 2);
  CHECK(other.err.find("--set") == std::string::npos);
}

TEST_CASE("cli: train --cfg job prints the resolved spec, whatever the run folder holds") {
  const std::string dir = scratch_dir("cfg_job");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  REQUIRE(run_cli("train " + dir + "/tiny.yaml --set train.max_steps=2 --out " + dir + "/run", dir).code == 0);
  const std::string config = slurp(dir + "/run/config.yaml");
  CliResult cfg = run_cli("train " + dir + "/tiny.yaml --set train.max_steps=7 --out " + dir + "/run --cfg job", dir);
  INFO(cfg.err);
  CHECK(cfg.code == 0);
  CHECK(cfg.out.find("# Resolved spec (transnormer)") == 0);
  CHECK(cfg.out.find("  max_steps: 7\n") != std::string::npos);
  CHECK(cfg.out.find("  d_model: 32\n") != std::string::npos);
  CHECK(slurp(dir + "/run/config.yaml") == config);  // the run is left alone
  CHECK(run_cli("train " + dir + "/tiny.yaml --cfg hydra", dir).code == 2);
}

TEST_CASE("bad input: a seq_len longer than the training data, and out-of-range bench flags") {
  CliResult r = train_with("long_seq", replaced(kGood, "seq_len: 32", "seq_len: 300000"));
  CHECK(r.code == 2);
  CHECK(r.err.find("data.seq_len") != std::string::npos);
  const std::string dir = scratch_dir("bad_bench_flags");
  write_text(dir + "/model.yaml", "model:\n  vocab_size: 50\n  d_model: 16\n  n_layers: 1\n  n_heads: 2\n");
  for (const char* flag : {"--batch 0", "--batch -1", "--seq-len 0", "--steps 0", "--threads -1"}) {
    INFO(flag);
    CHECK(run_cli("bench " + dir + "/model.yaml " + flag, dir).code == 2);
  }
  CHECK(run_cli("train " + dir + "/model.yaml --threads -1", dir).code == 2);
}

TEST_CASE("bad input: an unknown command names the commands") {
  const std::string dir = scratch_dir("unknown_verb");
  CliResult r = run_cli("trian configs/quickstart.yaml", dir);
  CHECK(r.code == 2);
  CHECK(r.err.find("unknown command 'trian'") != std::string::npos);
  CHECK(r.err.find("train, eval, forward, bench, generate") != std::string::npos);
}

TEST_CASE("bad input: bench validates a whole spec like train, and model-only files take only model.* overrides") {
  const std::string dir = scratch_dir("bad_bench_spec");
  write_text(dir + "/spec.yaml", replaced(kGood, "  max_steps: 2\n", "  max_steps: 2\n  precision: bf61\n"));
  CliResult r = run_cli("bench " + dir + "/spec.yaml --probe-size 0 --steps 1", dir);
  CHECK(r.code == 2);
  CHECK(r.err.find("spec.yaml:") != std::string::npos);
  CHECK(r.err.find("bf16") != std::string::npos);  // the nearest valid value
  write_text(dir + "/typo.yaml", replaced(kGood, "model:", "modle:"));
  r = run_cli("bench " + dir + "/typo.yaml --probe-size 0 --steps 1", dir);
  CHECK(r.code == 2);
  CHECK(r.err.find("modle") != std::string::npos);

  write_text(dir + "/model.yaml", "model:\n  vocab_size: 50\n  d_model: 16\n  n_layers: 1\n  n_heads: 2\n");
  r = run_cli("bench " + dir + "/model.yaml --set train.precision=bf16 --probe-size 0 --steps 1", dir);
  CHECK(r.code == 2);
  CHECK(r.err.find("only model.* keys") != std::string::npos);
  CHECK(r.err.find("--precision") != std::string::npos);
  r = run_cli("bench " + dir + "/model.yaml --probe-reps 0", dir);
  CHECK(r.code == 2);
  CHECK(r.err.find("1 to 1000") != std::string::npos);  // a readable range, not DBL_MAX
  // A spec whose data is missing: bench needs it only for the vocabulary size, and says so.
  write_text(dir + "/nodata.yaml", replaced(kGood, "wikitext-103/wiki.valid.tokens", "absent/wiki.train.tokens"));
  r = run_cli("bench " + dir + "/nodata.yaml --probe-size 0 --steps 1", dir);
  CHECK(r.code == 2);
  CHECK(r.err.find("absent/wiki.train.tokens") != std::string::npos);
  CHECK(r.err.find("--vocab V") != std::string::npos);
  // An empty file is a model-only file of defaults: what it lacks is named with the file.
  write_text(dir + "/empty.yaml", "");
  r = run_cli("bench " + dir + "/empty.yaml --probe-size 0 --steps 1", dir);
  CHECK(r.code == 2);
  CHECK(r.err.find("empty.yaml: model.vocab_size is not set") != std::string::npos);
  CHECK(r.err.find("--vocab V") != std::string::npos);
}

TEST_CASE("bad input: a model or batch that cannot fit is refused before training, with the sizes") {
  const std::string dir = scratch_dir("bad_memory");
  write_text(dir + "/good.yaml", kGood);
  CliResult wide = run_cli("train " + dir + "/good.yaml --set model.d_model=100000000 --out " + dir + "/wide", dir);
  CHECK(wide.code == 2);
  CHECK(wide.err.find("the run needs at least") != std::string::npos);
  CHECK(wide.err.find("GiB this process may use") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir + "/wide"));  // refused before the run directory
  CliResult batch = run_cli("train " + dir + "/good.yaml --set train.batch_size=1000000000 --out " + dir + "/big", dir);
  CHECK(batch.code == 2);
  CHECK(batch.err.find("train.batch_size: 1000000000 exceeds the") != std::string::npos);
  CliResult bench = run_cli("bench " + dir + "/good.yaml --vocab 1000 --set model.d_model=100000000 --probe-size 0", dir);
  CHECK(bench.code == 2);
  CHECK(bench.err.find("the run needs at least") != std::string::npos);
  // bench's fix names its own flags, not the spec's train.batch_size.
  CliResult long_bench = run_cli("bench " + dir + "/good.yaml --vocab 1000 --batch 1048576 --seq-len 16777216 "
                                 "--probe-size 0", dir);
  CHECK(long_bench.code == 2);
  CHECK(long_bench.err.find("lower --batch or --seq-len") != std::string::npos);
  CHECK(long_bench.err.find("train.batch_size") == std::string::npos);
}

TEST_CASE("bad input: token ids outside the checkpoint's vocabulary exit 2, naming the input") {
  const std::string dir = scratch_dir("bad_ids");
  // dec_t1's vocabulary is far below 1000000; -100 is allowed only among the targets.
  write_text(dir + "/tokens.json", "{\"task\": \"lm\", \"batch\": 1, \"seq_len\": 2, \"tokens\": [[1, 1000000]], \"targets\": [[1, 2]]}");
  CliResult t = run_cli("forward --checkpoint '" + golden_root() + "/dec_t1/model.safetensors' --input " + dir + "/tokens.json", dir);
  CHECK(t.code == 2);
  CHECK(t.err.find("tokens.json: \"tokens\" holds 1000000, outside [0, ") != std::string::npos);
  write_text(dir + "/targets.json", "{\"task\": \"lm\", \"batch\": 1, \"seq_len\": 2, \"tokens\": [[1, 2]], \"targets\": [[-100, -5]]}");
  CliResult g = run_cli("forward --checkpoint '" + golden_root() + "/dec_t1/model.safetensors' --input " + dir + "/targets.json", dir);
  CHECK(g.code == 2);
  CHECK(g.err.find("\"targets\" holds -5") != std::string::npos);
}

TEST_CASE("bad input: the memory check counts ulimit -v, not only the machine's memory") {
  const std::string dir = scratch_dir("bad_ulimit");
  write_text(dir + "/good.yaml", kGood);
  // About 2 GiB of weights, gradients and moments: within this machine's memory, beyond 1.5 GiB.
  const CliResult r = run_command_line(
      "ulimit -v 1500000; TRANSNORMER_DATA='" + data_root() + "' OMP_NUM_THREADS=2 '" + binary() + "' train " + dir +
          "/good.yaml --set model.d_model=1024 --set model.n_layers=8 --out " + dir + "/run",
      dir + "/stdout.txt", dir + "/stderr.txt");
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find("the run needs at least") != std::string::npos);
  CHECK(r.err.find("the address-space limit (ulimit -v)") != std::string::npos);
  CHECK(r.err.find("bad_alloc") == std::string::npos);
}

TEST_CASE("bad input: bytes that are not UTF-8 in a spec, a --set value or a sweep file name their line and the fix") {
  const std::string dir = scratch_dir("bad_utf8");
  write_text(dir + "/latin1.yaml", std::string(kGood) + "name: caf\xE9\n");  // Latin-1 é
  CliResult r = run_cli("train " + dir + "/latin1.yaml --out " + dir + "/run", dir);
  CHECK(r.code == 2);
  CHECK(r.err.find(dir + "/latin1.yaml:13:10: byte 0xE9 is not UTF-8") != std::string::npos);
  CHECK(r.err.find("json.exception") == std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir + "/run"));

  write_text(dir + "/good.yaml", kGood);
  r = run_cli("train " + dir + "/good.yaml --set 'name=x\xFFy' --out " + dir + "/run", dir);
  CHECK(r.code == 2);
  CHECK(r.err.find("byte 0xFF is not UTF-8") != std::string::npos);

  write_text(dir + "/sweep.yaml", "base: good.yaml\npoints:\n  - {name: \"caf\xE9\", set: {train.max_steps: 1}}\n");
  r = run_cli("sweep " + dir + "/sweep.yaml --dry-run --out " + dir + "/sweep", dir);
  CHECK(r.code == 2);
  CHECK(r.err.find(dir + "/sweep.yaml:3:") != std::string::npos);
  CHECK(r.err.find("not UTF-8") != std::string::npos);
}

TEST_CASE("bad input: an empty valid, test or train file is named, not skipped") {
  const std::string dir = scratch_dir("bad_empty_split");
  write_text(dir + "/empty.tokens", "");
  for (const std::string key : {"valid", "test", "train"}) {
    std::string yaml = replaced(kGood, "  split_valid_from_train: 0.1\n", "");
    if (key == "train")
      yaml = replaced(yaml, "wikitext-103/wiki.valid.tokens", dir + "/empty.tokens");
    else
      yaml = replaced(yaml, "  seq_len: 32\n", "  seq_len: 32\n  " + key + ": " + dir + "/empty.tokens\n");
    write_text(dir + "/" + key + ".yaml", yaml);
    const CliResult r = run_cli("train " + dir + "/" + key + ".yaml --out " + dir + "/run_" + key, dir);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(dir + "/empty.tokens: is empty, but data." + key + " names it") != std::string::npos);
  }
}

TEST_CASE("bad input: brackets nested 200,000 deep are named as such, with the line") {
  const std::string dir = scratch_dir("bad_deep");
  write_text(dir + "/deep.yaml", "# a comment with [ and {\nname: \"a [ in quotes\"\nmodel: " + std::string(200000, '[') +
                                     std::string(200000, ']') + "\n");
  const CliResult r = run_cli("train " + dir + "/deep.yaml --dry-run", dir);
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find(dir + "/deep.yaml:3: lists or mappings nest more than 256 levels deep") != std::string::npos);
}

TEST_CASE("bad input: a recursive alias and an alias bomb are refused with the line, not a crash") {
  const std::string dir = scratch_dir("bad_alias");
  write_text(dir + "/recursive.yaml", "name: r\nmodel: &a\n  d_model: *a\n");
  const CliResult r = run_cli("train " + dir + "/recursive.yaml --dry-run", dir);
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find(dir + "/recursive.yaml:2: model.d_model.d_model") != std::string::npos);
  CHECK(r.err.find("aliases must not be recursive") != std::string::npos);
  // Ten values, then each level ten aliases of the one before: 10^7 values once expanded.
  std::string bomb = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 6; ++i) {
    const std::string prev = "*l" + std::to_string(i - 1);
    bomb += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [" + prev;
    for (int j = 1; j < 10; ++j) bomb += ", " + prev;
    bomb += "]\n";
  }
  write_text(dir + "/bomb.yaml", bomb);
  const CliResult b = run_cli("train " + dir + "/bomb.yaml --dry-run", dir);
  INFO(b.err);
  CHECK(b.code == 2);
  CHECK(b.err.find("expand this spec to more than 100000 values") != std::string::npos);
}
