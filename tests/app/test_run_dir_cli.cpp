// The life of a run directory through the CLI: a folder holding a run is never overwritten without
// --overwrite (and is left byte for byte as it was), a run records how it was started (run.json,
// train.log), `train --dry-run` writes nothing, schedules that do not fit max_steps are warned
// about, and --version prints the version that run.json records.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <csignal>
#include <sstream>
#include <filesystem>
#include <map>

#include "tests/app/cli_runner.h"
#include "tests/app/tiny_spec.h"

using namespace tn::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// Every file of `dir` (recursively) with its bytes.
std::map<std::string, std::string> folder_bytes(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file()) out[fs::relative(entry.path(), dir).string()] = slurp(entry.path().string());
  return out;
}

}  // namespace

TEST_CASE("cli: a folder holding a run is refused without --resume or --overwrite, and left intact") {
  const std::string dir = scratch_dir("run_dir_overwrite");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  const std::string train = "train " + dir + "/tiny.yaml --set train.max_steps=10 --threads 1 --out " + dir + "/run";
  REQUIRE(run_cli(train, dir).code == 0);
  const auto before = folder_bytes(dir + "/run");
  REQUIRE(before.count("checkpoint.safetensors") == 1);

  const CliResult again = run_cli(train + " --set train.seed=9", dir);
  INFO(again.err);
  CHECK(again.code == 2);
  CHECK(again.err.find("already holds a run") != std::string::npos);
  CHECK(again.err.find("`transnormer train --resume " + dir + "/run`") != std::string::npos);
  CHECK(again.err.find("--overwrite") != std::string::npos);
  CHECK(again.err.find("info data:") == std::string::npos);  // refused before the data loads
  CHECK(folder_bytes(dir + "/run") == before);  // byte for byte

  CHECK(run_cli(train + " --resume --overwrite", dir).code == 2);  // one or the other

  // --overwrite starts again: a new history of one session, the other seed's numbers; a user's
  // own file in predictions/ stays (only the run's <split>.jsonl go), and an old best checkpoint
  // goes (a new run without best_metric writes none, so `eval --best` must not find the old one).
  write_text(dir + "/run/predictions/mine.txt", "keep me too");
  write_text(dir + "/run/predictions/test.jsonl", "{}\n");
  std::filesystem::copy_file(dir + "/run/checkpoint.safetensors", dir + "/run/checkpoint_best.safetensors");
  const CliResult over = run_cli(train + " --set train.seed=9 --overwrite", dir);
  INFO(over.err);
  REQUIRE(over.code == 0);
  const json history = json::parse(slurp(dir + "/run/run.json"));
  CHECK(history["sessions"].size() == 1);
  CHECK(slurp(dir + "/run/config.yaml").find("seed: 9") != std::string::npos);
  CHECK(slurp(dir + "/run/summary.json") != before.at("summary.json"));
  CHECK(slurp(dir + "/run/predictions/mine.txt") == "keep me too");
  CHECK(!std::filesystem::exists(dir + "/run/predictions/test.jsonl"));  // the old run's, deleted
  CHECK(!std::filesystem::exists(dir + "/run/checkpoint_best.safetensors"));

  // A sweep folder is no run folder: refused, with or without --overwrite, and left as it was.
  write_text(dir + "/sweep/sweep.json", "{}");
  for (const std::string flag : {"", " --overwrite"}) {
    const CliResult into_sweep = run_cli("train " + dir + "/tiny.yaml --threads 1 --out " + dir + "/sweep" + flag, dir);
    CHECK(into_sweep.code == 2);
    CHECK(into_sweep.err.find(dir + "/sweep is a sweep folder (it holds sweep.json)") != std::string::npos);
  }
  CHECK(std::distance(fs::directory_iterator(dir + "/sweep"), fs::directory_iterator()) == 1);

  // eval of a run that has not finished (no summary.json) says so, and which step it scores.
  fs::copy(dir + "/run", dir + "/unfinished", fs::copy_options::recursive);
  fs::remove(dir + "/unfinished/summary.json");
  const CliResult unfinished = run_cli("eval " + dir + "/unfinished --threads 1", dir);
  CHECK(unfinished.code == 0);
  CHECK(unfinished.err.find(dir + "/unfinished is not finished (its checkpoint is of step 10 of 10; last session: "
                            "done): the weights used are those of that step; continue the run with `transnormer train "
                            "--resume " + dir + "/unfinished`") != std::string::npos);
  CHECK(json::parse(unfinished.out)["step"] == 10);
  CHECK(run_cli("eval " + dir + "/run --threads 1", dir).err.find("not finished") == std::string::npos);

  // A folder with other files but no run is fine, and they stay.
  write_text(dir + "/mine/notes.txt", "keep me");
  REQUIRE(run_cli("train " + dir + "/tiny.yaml --set train.max_steps=5 --threads 1 --out " + dir + "/mine", dir).code == 0);
  CHECK(slurp(dir + "/mine/notes.txt") == "keep me");
}

TEST_CASE("cli: a run records its command, overrides, version, host, threads and times, and train.log keeps its log") {
  const std::string dir = scratch_dir("run_dir_record");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  const CliResult version = run_cli("--version", dir);
  REQUIRE(version.code == 0);
  REQUIRE(version.out.rfind("transnormer ", 0) == 0);
  const std::string program_version = version.out.substr(12, version.out.find('\n') - 12);

  const CliResult first = run_cli("train " + dir + "/tiny.yaml --set train.max_steps=10 --threads 1 --out " + dir + "/run", dir);
  REQUIRE(first.code == 0);
  const CliResult second = run_cli("train --resume " + dir + "/run --set train.max_steps=20", dir);
  INFO(second.err);
  REQUIRE(second.code == 0);
  const json history = json::parse(slurp(dir + "/run/run.json"));
  REQUIRE(history["sessions"].size() == 2);
  const json& s0 = history["sessions"][0];
  CHECK(s0["command"] == "transnormer train " + dir + "/tiny.yaml --set train.max_steps=10 --threads 1 --out " + dir + "/run");
  CHECK(s0["overrides"] == json{"train.max_steps=10"});
  CHECK(s0["version"] == program_version);
  CHECK(s0["threads"] == 1);
  CHECK(s0["ranks"] == 1);
  CHECK_FALSE(s0["host"].get<std::string>().empty());
  CHECK(s0["outcome"] == "done");
  CHECK(s0["started"].get<std::string>().size() == 20);  // 2026-12-02T04:04:07Z
  CHECK(s0["ended"].get<std::string>() >= s0["started"].get<std::string>());
  CHECK(history["sessions"][1]["command"] == "transnormer train --resume " + dir + "/run --set train.max_steps=20");
  CHECK(history["sessions"][1]["outcome"] == "done");

  // A finished run keeps one train state: the previous one only guards a save in progress.
  CHECK(fs::exists(dir + "/run/train_state.safetensors"));
  CHECK_FALSE(fs::exists(dir + "/run/train_state.previous.safetensors"));

  // train.log: what stderr showed, of both sessions (the resume appends).
  const std::string log = slurp(dir + "/run/train.log");
  CHECK(log.find("model: 2 layers") != std::string::npos);
  CHECK(log.find("resuming") != std::string::npos);
  CHECK(log.find("step     20") != std::string::npos);

  // --data relative to the data root (not found from the current folder) for eval and analyze.
  REQUIRE_FALSE(fs::exists("wikitext-103/wiki.test.tokens"));
  const std::string ckpt = dir + "/run/checkpoint.safetensors";
  const CliResult eval = run_cli("eval --checkpoint " + ckpt + " --data wikitext-103/wiki.test.tokens --seq-len 32", dir);
  INFO(eval.err);
  CHECK(eval.code == 0);
  CHECK(json::parse(eval.out)["tokens"].get<int64_t>() > 100000);
  const CliResult locality = run_cli("analyze locality --checkpoint " + ckpt +
                                     " --data wikitext-103/wiki.test.tokens --seq-len 32 --samples 2 --out " + dir + "/loc",
                                     dir);
  INFO(locality.err);
  CHECK(locality.code == 0);
  CHECK(fs::exists(dir + "/loc/locality.json"));

  // A folder is not a spec without --resume, and --resume needs a run in it.
  const CliResult folder = run_cli("train " + dir + "/run", dir);
  CHECK(folder.code == 2);
  CHECK(folder.err.find("--resume") != std::string::npos);
  fs::create_directories(dir + "/empty");
  CHECK(run_cli("train --resume " + dir + "/empty", dir).code == 2);
  const CliResult nowhere = run_cli("train --resume " + dir + "/no_such_run", dir);
  CHECK(nowhere.code == 2);
  CHECK(nowhere.err.find("no_such_run: no such run folder or spec file to resume") != std::string::npos);
}

TEST_CASE("cli: train --dry-run prints the resolved spec, data and memory, warns about the schedule, writes nothing") {
  const std::string dir = scratch_dir("run_dir_dry");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  const CliResult dry = run_cli("train " + dir + "/tiny.yaml --dry-run --set train.max_steps=3 --out " + dir + "/run", dir);
  INFO(dry.err);
  REQUIRE(dry.code == 0);
  CHECK_FALSE(fs::exists(dir + "/run"));
  CHECK(dry.out.find("task: language_modeling") != std::string::npos);
  CHECK(dry.out.find("vocab_size: ") != std::string::npos);  // filled from the data
  CHECK(dry.out.find("# data train: ") != std::string::npos);
  CHECK(dry.out.find("# parameters: about") != std::string::npos);
  // warmup 5 > 3 steps: step k trains at lr(k − 1), so the last step's inverse sqrt warmup lr is
  // 1e-7 + 2 · (3e-3 − 1e-7)/5 = 0.0012 (the log's lr at step 3; the warning said 0.0018).
  CHECK(dry.out.find("# warning: train.schedule.warmup_steps (5) is not below train.max_steps (3)") != std::string::npos);
  CHECK(dry.out.find("at lr 0.0012 of the peak 0.003") != std::string::npos);
  // A decay longer than the run: polynomial decay 1e-3 → 0 over 100 steps stops at step 10, which
  // trains at lr(9) = 1e-3 · (1 − 9/100) = 0.00091.
  const CliResult decay = run_cli("train " + dir + "/tiny.yaml --dry-run --set train.max_steps=10 "
                                  "--set 'train.schedule={name: polynomial_decay, warmup_steps: 0, total_steps: 100}' "
                                  "--set train.optimizer.lr=1e-3",
                                  dir);
  INFO(decay.err);
  REQUIRE(decay.code == 0);
  CHECK(decay.out.find("total_steps (100) is beyond train.max_steps (10): the decay is cut short at lr 0.00091") !=
        std::string::npos);
  // More threads than CPUs: the warning the run would give (1000 is above any CI machine's cores).
  const CliResult many = run_cli("train " + dir + "/tiny.yaml --dry-run --threads 1000", dir);
  CHECK(many.code == 0);
  CHECK(many.out.find("# warning: 1000 threads asked for, but this process may run on ") != std::string::npos);
  CHECK(run_cli("train " + dir + "/tiny.yaml --dry-run --threads 1", dir).out.find("threads asked for") ==
        std::string::npos);
  // A train.init_from that does not exist: refused by the dry run as by the run, and the run
  // creates nothing (not even its folder, train.log or .lock).
  const std::string nowhere = " --set train.init_from=" + dir + "/nowhere --out " + dir + "/warm";
  const CliResult dry_init = run_cli("train " + dir + "/tiny.yaml --dry-run" + nowhere, dir);
  CHECK(dry_init.code == 2);
  CHECK(dry_init.err.find("train.init_from: " + dir + "/nowhere: no such run directory") != std::string::npos);
  const CliResult run_init = run_cli("train " + dir + "/tiny.yaml --threads 1" + nowhere, dir);
  CHECK(run_init.code == 2);
  CHECK_FALSE(fs::exists(dir + "/warm"));
  // Into a folder holding a run: the same refusal as a run, and nothing written.
  REQUIRE(run_cli("train " + dir + "/tiny.yaml --set train.max_steps=5 --threads 1 --out " + dir + "/run", dir).code == 0);
  const auto before = folder_bytes(dir + "/run");
  const CliResult refused = run_cli("train " + dir + "/tiny.yaml --dry-run --out " + dir + "/run", dir);
  CHECK(refused.code == 2);
  CHECK(refused.err.find("already holds a run") != std::string::npos);
  CHECK(folder_bytes(dir + "/run") == before);
}

TEST_CASE("cli: a spec composed on another (base:) takes its keys, and errors point at the file that wrote the value") {
  const std::string dir = scratch_dir("run_dir_compose");
  write_text(dir + "/base.yaml", tiny_spec(dir));
  write_text(dir + "/sub/child.yaml", "base: ../base.yaml\nmodel: {d_model: 16}\ntrain:\n  max_steps: 7\n");
  const CliResult dry = run_cli("train " + dir + "/sub/child.yaml --dry-run", dir);
  INFO(dry.err);
  REQUIRE(dry.code == 0);
  CHECK(dry.out.find("from " + dir + "/sub/child.yaml") != std::string::npos);
  CHECK(dry.out.find("d_model: 16") != std::string::npos);   // the child's
  CHECK(dry.out.find("n_layers: 2") != std::string::npos);   // the base's, in the merged model mapping
  CHECK(dry.out.find("max_steps: 7") != std::string::npos);  // the child's
  CHECK(dry.out.find("batch_size: 4") != std::string::npos); // the base's, in the merged train mapping
  CHECK(dry.out.find("# run directory: runs/child") != std::string::npos);  // named after the child

  // A child that switches the schedule's kind replaces the base's schedule (its warmup_init_lr
  // belongs to inverse_sqrt, and merged into a cosine it was refused).
  std::string inv_spec = tiny_spec(dir);
  const std::string inv_schedule = "{name: inverse_sqrt, warmup_steps: 5}";
  REQUIRE(inv_spec.find(inv_schedule) != std::string::npos);
  inv_spec.replace(inv_spec.find(inv_schedule), inv_schedule.size(),
                   "{name: inverse_sqrt, warmup_steps: 5, warmup_init_lr: 1e-7}");
  write_text(dir + "/inv.yaml", inv_spec);
  write_text(dir + "/cos.yaml", "base: inv.yaml\ntrain:\n  schedule: {name: cosine, warmup_steps: 2}\n");
  const CliResult cos = run_cli("train " + dir + "/cos.yaml --dry-run", dir);
  INFO(cos.err);
  CHECK(cos.code == 0);
  CHECK(cos.out.find("schedule: {name: cosine, warmup_steps: 2") != std::string::npos);
  CHECK(cos.out.find("warmup_init_lr") == std::string::npos);
  write_text(dir + "/inv2.yaml", "base: inv.yaml\ntrain:\n  schedule: {warmup_steps: 3}\n");  // the same kind: merged
  const CliResult inv = run_cli("train " + dir + "/inv2.yaml --dry-run", dir);
  CHECK(inv.code == 0);
  CHECK(inv.out.find("warmup_init_lr: 1e-07") != std::string::npos);

  // A bad key in the child is located in the child; a bad value from the base, in the base.
  write_text(dir + "/sub/typo.yaml", "base: ../base.yaml\nmodel:\n  d_modle: 16\n");
  const CliResult typo = run_cli("train " + dir + "/sub/typo.yaml --dry-run", dir);
  CHECK(typo.code == 2);
  CHECK(typo.err.find(dir + "/sub/typo.yaml:3") != std::string::npos);
  write_text(dir + "/bad_base.yaml", tiny_spec(dir) + "  clip_norm: -1\n");
  write_text(dir + "/on_bad.yaml", "base: bad_base.yaml\ntrain: {max_steps: 5}\n");
  const CliResult from_base = run_cli("train " + dir + "/on_bad.yaml --dry-run", dir);
  CHECK(from_base.code == 2);
  CHECK(from_base.err.find(dir + "/bad_base.yaml:") != std::string::npos);
  CHECK(from_base.err.find("clip_norm") != std::string::npos);
  // A missing base and a cycle, at the base: line.
  write_text(dir + "/lost.yaml", "train: {max_steps: 5}\nbase: nowhere.yaml\n");
  const CliResult lost = run_cli("train " + dir + "/lost.yaml --dry-run", dir);
  CHECK(lost.code == 2);
  CHECK(lost.err.find(dir + "/lost.yaml:2: base:") != std::string::npos);
  write_text(dir + "/a.yaml", "base: b.yaml\n");
  write_text(dir + "/b.yaml", "base: a.yaml\n");
  const CliResult cycle = run_cli("train " + dir + "/a.yaml --dry-run", dir);
  CHECK(cycle.code == 2);
  CHECK(cycle.err.find("cycle") != std::string::npos);
  // A sweep file given to train, or named as a base:, is said to be one (not "unknown key name").
  write_text(dir + "/sw.yaml", "name: s\nbase: bad_base.yaml\npoints:\n  - {name: a}\n");
  const CliResult sweep_as_spec = run_cli("train " + dir + "/sw.yaml --dry-run", dir);
  CHECK(sweep_as_spec.code == 2);
  CHECK(sweep_as_spec.err.find(dir + "/sw.yaml:3: points: makes") != std::string::npos);
  CHECK(sweep_as_spec.err.find("transnormer sweep") != std::string::npos);
  write_text(dir + "/on_sweep.yaml", "train: {max_steps: 5}\nbase: sw.yaml\n");
  const CliResult sweep_as_base = run_cli("train " + dir + "/on_sweep.yaml --dry-run", dir);
  CHECK(sweep_as_base.code == 2);
  CHECK(sweep_as_base.err.find(dir + "/on_sweep.yaml:2: base:") != std::string::npos);
  CHECK(sweep_as_base.err.find("names a sweep file") != std::string::npos);
  CHECK(sweep_as_base.err.find("unknown key") == std::string::npos);
}

TEST_CASE("cli: a second train on a folder in use is refused (exit 2) and the first run is left whole") {
  const std::string dir = scratch_dir("run_dir_lock");
  const std::string spec = dir + "/tiny.yaml";
  write_text(spec, tiny_spec(dir));
  const std::string out = dir + "/run";
  CliChild first = spawn_cli("train " + spec + " --set train.max_steps=100000 --threads 1 --out " + out, dir, "first");
  for (int i = 0; i < 12000 && slurp(out + "/metrics.jsonl").empty(); ++i) ::usleep(5000);
  REQUIRE_FALSE(slurp(out + "/metrics.jsonl").empty());

  // Plain, --overwrite or --resume: the writer at work is named first (not "already holds a run").
  for (const std::string flag : {"", "--overwrite", "--resume"}) {
    CliResult second = run_cli("train " + spec + " --set train.max_steps=10 --threads 1 " + flag + " --out " + out, dir);
    INFO(second.err);
    CHECK(second.code == 2);
    CHECK(second.err.find("the run folder " + out + " is in use by another transnormer process (pid " +
                          std::to_string(first.pid) + ")") != std::string::npos);
  }
  CHECK(slurp(out + "/config.yaml").find("max_steps: 100000") != std::string::npos);  // the first's

  ::kill(first.pid, SIGTERM);  // the first stops as usual, with its checkpoint
  const CliResult stopped = wait_cli(first);
  CHECK(stopped.code == 143);
  CHECK(fs::exists(out + "/checkpoint.safetensors"));
}

namespace {

/// Waits up to `seconds` for a spawned child; its result, or code -1 when it still ran (then killed:
/// it blocked).
CliResult wait_at_most(const CliChild& c, int seconds) {
  for (int i = 0; i < seconds * 100; ++i) {
    int status = 0;
    if (::waitpid(c.pid, &status, WNOHANG) == c.pid) {
      CliResult r;
      r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      r.out = slurp(c.out);
      r.err = slurp(c.err);
      return r;
    }
    ::usleep(10000);
  }
  ::kill(c.pid, SIGKILL);
  ::waitpid(c.pid, nullptr, 0);
  return {-1, "", slurp(c.err)};
}

}  // namespace

TEST_CASE("cli: a link or FIFO or folder under a name a run writes is refused (exit 2) and what it leads to is untouched") {
  const std::string dir = scratch_dir("run_dir_links");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  const std::string victim = dir + "/victim.txt";
  const std::string train = "train " + dir + "/tiny.yaml --set train.max_steps=5 --threads 1 --out ";
  // A symlinked .lock took the run's pid into its target; a symlinked train.log was truncated and
  // filled with the log; a symlinked metrics.jsonl or run.json would be replaced by the run's.
  for (const char* name : {".lock", "train.log", "metrics.jsonl", "run.json", "checkpoint.safetensors"}) {
    CAPTURE(name);
    write_text(victim, "the user's file\n");
    const std::string out = dir + "/linked_" + std::string(name).substr(1);
    fs::create_directories(out);
    fs::create_symlink(victim, out + "/" + name);
    const CliResult r = run_cli(train + out, dir);
    CHECK(r.code == 2);
    CHECK(r.err.find(out + "/" + name + " is a symbolic link") != std::string::npos);
    CHECK(slurp(victim) == "the user's file\n");
    CHECK(fs::is_symlink(out + "/" + name));
  }
  // A FIFO: the open blocked for good (SIGTERM could not end it). Refused at once instead.
  for (const char* name : {".lock", "train.log", "config.yaml"}) {
    CAPTURE(name);
    const std::string out = dir + "/fifo_" + std::string(name).substr(1);
    fs::create_directories(out);
    REQUIRE(::mkfifo((out + "/" + name).c_str(), 0600) == 0);
    const CliResult r = wait_at_most(spawn_cli(train + out, dir, "fifo"), 60);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(out + "/" + name + " is a FIFO") != std::string::npos);
    CHECK(fs::is_fifo(out + "/" + name));
  }
  // predictions/ as a link to a user's folder: nothing is written or deleted through it.
  const std::string out = dir + "/linked_predictions";
  fs::create_directories(dir + "/mine");
  fs::create_directories(out);
  fs::create_directory_symlink(dir + "/mine", out + "/predictions");
  const CliResult r = run_cli(train + out, dir);
  CHECK(r.code == 2);
  CHECK(r.err.find(out + "/predictions is a symbolic link, not a folder") != std::string::npos);
}

TEST_CASE("cli: --overwrite deletes only a run's files: a config.yaml and summary.json no run wrote are refused and kept") {
  const std::string dir = scratch_dir("run_dir_not_a_run");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  const std::string out = dir + "/mine";
  write_text(out + "/config.yaml", "my: own config\n");
  write_text(out + "/summary.json", "{\"mine\": true}\n");
  for (const std::string flag : {"", " --overwrite"}) {
    const CliResult r = run_cli("train " + dir + "/tiny.yaml --set train.max_steps=5 --threads 1 --out " + out + flag, dir);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(out + " holds config.yaml, summary.json") != std::string::npos);
    CHECK(r.err.find("no run wrote them") != std::string::npos);
    CHECK(slurp(out + "/config.yaml") == "my: own config\n");
    CHECK(slurp(out + "/summary.json") == "{\"mine\": true}\n");
  }
  // A run's own folder, even kept without run.json (scripts/keep_run_records.sh keeps its
  // metrics.jsonl), is a run's: --overwrite replaces it.
  const std::string run = dir + "/run";
  REQUIRE(run_cli("train " + dir + "/tiny.yaml --set train.max_steps=5 --threads 1 --out " + run, dir).code == 0);
  fs::remove(run + "/run.json");
  const CliResult over = run_cli("train " + dir + "/tiny.yaml --set train.max_steps=5 --threads 1 --overwrite --out " + run, dir);
  INFO(over.err);
  CHECK(over.code == 0);
  CHECK(fs::exists(run + "/run.json"));
}

TEST_CASE("cli: an --out no folder can be made at exits 2 with the reason, in the run and in --dry-run alike") {
  const std::string dir = scratch_dir("run_dir_unmakeable");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  const std::string train = "train " + dir + "/tiny.yaml --set train.max_steps=2 --threads 1 --out ";
  // Each exited 1 with a raw mkdir or open error once the data had loaded; --dry-run said 0.
  const std::map<std::string, std::string> cases = {
      {"/proc/transnormer_run", "virtual file system"},
      {dir + "/" + std::string(300, 'n') + "/run", "over the 255 a file name may have"},
      {dir + "/" + std::string(300, 'n'), "over the 255 a file name may have"},
  };
  for (const auto& entry : cases) {  // no structured binding: CAPTURE is a lambda (clang 14)
    const std::string& out = entry.first;
    const std::string& reason = entry.second;
    CAPTURE(out);
    for (const char* dry : {"", " --dry-run"}) {
      const CliResult r = run_cli(train + out + dry, dir);
      CHECK(r.code == 2);
      CHECK(r.err.find(reason) != std::string::npos);
    }
  }
}

TEST_CASE("cli: a spec read from a pipe (bash's <(...)) trains into the --out it needs, and a sweep asks for the file") {
  const std::string dir = scratch_dir("spec_pipe");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  const std::string env = "TRANSNORMER_DATA='" + data_root() + "' OMP_NUM_THREADS=1 '" + binary() + "' ";
  const auto bash = [&](const std::string& line) {
    write_text(dir + "/line.sh", env + line + "\n");
    return run_command_line("bash '" + dir + "/line.sh'", dir + "/stdout.txt", dir + "/stderr.txt");
  };
  const CliResult trained = bash("train <(cat '" + dir + "/tiny.yaml') --set train.max_steps=2 --out '" + dir + "/run'");
  INFO(trained.err);
  CHECK(trained.code == 0);
  CHECK(fs::exists(dir + "/run/summary.json"));
  const CliResult no_out = bash("train <(cat '" + dir + "/tiny.yaml')");
  CHECK(no_out.code == 2);
  CHECK(no_out.err.find("is a pipe, whose name says nothing of the run: give its folder with --out DIR") !=
        std::string::npos);
  const CliResult cfg = bash("train <(cat '" + dir + "/tiny.yaml') --cfg job");
  CHECK(cfg.code == 0);
  CHECK(cfg.out.find("  d_model: 32\n") != std::string::npos);
  // A piped spec's relative base: is read from the current folder (a pipe has none of its own).
  write_text(dir + "/over.yaml", "base: tiny.yaml\ntrain: {seed: 9}\n");
  write_text(dir + "/based.sh", "cd '" + dir + "' && " + env + "train <(cat over.yaml) --cfg job\n");
  const CliResult based = run_command_line("bash '" + dir + "/based.sh'", dir + "/stdout.txt", dir + "/stderr.txt");
  INFO(based.err);
  CHECK(based.code == 0);
  CHECK(based.out.find("  seed: 9\n") != std::string::npos);
  CHECK(based.out.find("  d_model: 32\n") != std::string::npos);
  const CliResult sweep = bash("sweep <(cat '" + dir + "/tiny.yaml') --grid train.seed=1,2 --dry-run");
  CHECK(sweep.code == 2);
  CHECK(sweep.err.find("is a pipe: a sweep reads its file again") != std::string::npos);
}

TEST_CASE("cli: train.log has every line as it is logged, and a run killed with SIGKILL leaves them") {
  const std::string dir = scratch_dir("log_flush");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  const CliChild child = spawn_cli("train " + dir + "/tiny.yaml --set train.max_steps=100000 --set train.log_every=1 "
                                   "--set train.eval_every=0 --threads 1 --out " + dir + "/run",
                                   dir);
  // The third step's line reaches train.log while the run trains (a buffered file would hold it).
  bool seen = false;
  for (int i = 0; i < 12000 && !seen; ++i) {
    seen = slurp(dir + "/run/train.log").find("step      3/100000") != std::string::npos;
    if (!seen) ::usleep(5000);
  }
  CHECK(seen);
  ::kill(child.pid, SIGKILL);
  const CliResult killed = wait_cli(child);
  CHECK(killed.code == 128 + SIGKILL);
  // Every step line of stderr is in train.log too (there with the date before the time).
  const std::string log = slurp(dir + "/run/train.log");
  std::istringstream err(killed.err);
  for (std::string line; std::getline(err, line);)
    if (line.find(" info step ") != std::string::npos) {
      const std::string message = line.substr(line.find("] ") + 2);
      CHECK_MESSAGE(log.find(message) != std::string::npos, line);
    }
}

TEST_CASE("cli: --set takes one value, so the spec may come after it") {
  const std::string dir = scratch_dir("set_order");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  const CliResult cfg = run_cli("train --set train.max_steps=5 --set train.seed=7 " + dir + "/tiny.yaml --cfg job", dir);
  INFO(cfg.err);
  CHECK(cfg.code == 0);
  CHECK(cfg.out.find("  max_steps: 5\n") != std::string::npos);
  CHECK(cfg.out.find("  seed: 7\n") != std::string::npos);
  const CliResult dry = run_cli("sweep --set train.max_steps=5 " + dir + "/tiny.yaml --grid train.seed=1,2 --dry-run", dir);
  CHECK(dry.code == 0);
  CHECK(dry.out.find("2 to run") != std::string::npos);
}

TEST_CASE("cli: an empty --out, a folder for a spec, a run without a checkpoint yet, and a key --set twice are said so") {
  const std::string dir = scratch_dir("small_refusals");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  for (const std::string verb : {"train", "sweep"}) {
    const CliResult empty_out = run_cli(verb + " " + dir + "/tiny.yaml --out ''", dir);
    CHECK(empty_out.code == 2);
    CHECK(empty_out.err.find("--out is empty") != std::string::npos);
  }
  fs::create_directories(dir + "/specs");
  const CliResult folder = run_cli("train " + dir + "/specs", dir);
  CHECK(folder.code == 2);
  CHECK(folder.err.find("is a folder, not a spec file: give a spec file (YAML)") != std::string::npos);
  CHECK(folder.err.find("--resume") == std::string::npos);  // no run there to resume
  // A run folder with its config but no checkpoint yet (a run before its first evaluation).
  REQUIRE(run_cli("train " + dir + "/tiny.yaml --set train.max_steps=2 --threads 1 --out " + dir + "/run", dir).code == 0);
  fs::remove(dir + "/run/checkpoint.safetensors");
  fs::remove(dir + "/run/summary.json");
  const CliResult early = run_cli("eval " + dir + "/run", dir);
  CHECK(early.code == 2);
  CHECK(early.err.find("the run there has no checkpoint.safetensors yet") != std::string::npos);
  const CliResult twice =
      run_cli("train " + dir + "/tiny.yaml --set train.seed=1 --set train.seed=7 --cfg job", dir);
  CHECK(twice.code == 0);
  CHECK(twice.err.find("--set train.seed=1 and --set train.seed=7 give train.seed twice: the last, train.seed=7, is used") !=
        std::string::npos);
  CHECK(twice.out.find("  seed: 7\n") != std::string::npos);
}

TEST_CASE("cli: train --resume takes a run's own config.yaml for its run folder, as eval does") {
  const std::string dir = scratch_dir("run_dir_resume_config");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  REQUIRE(run_cli("train " + dir + "/tiny.yaml --set train.max_steps=4 --threads 1 --out " + dir + "/run", dir).code == 0);
  const CliResult r = run_cli("train --resume " + dir + "/run/config.yaml --set train.max_steps=6 --threads 1", dir);
  INFO(r.err);
  CHECK(r.code == 0);
  const json history = json::parse(slurp(dir + "/run/run.json"));
  CHECK(history["sessions"].size() == 2);
  CHECK(json::parse(slurp(dir + "/run/summary.json"))["train"]["steps"] == 6);
  CHECK_FALSE(std::filesystem::exists(dir + "/runs"));  // not taken for a spec named "config"
}
