// `transnormer sweep` end to end on the tiny spec: points run as child `train` processes, the
// index records their states, a rerun skips what is done, an interrupted point (its child killed,
// or the sweep stopped by SIGTERM) resumes to the numbers of an uninterrupted run, a diverging
// point is recorded while the others finish, and bad sweep files exit 2 with file:line.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/app/cli_runner.h"
#include "tests/app/tiny_spec.h"

using namespace tn::test;
using nlohmann::json;

namespace {

json point(const std::string& sweep_dir, const std::string& dir) {
  const json index = json::parse(slurp(sweep_dir + "/sweep.json"));
  for (const json& p : index["points"])
    if (p["dir"] == dir) return p;
  return json();
}

/// Waits until `file` contains `text` (up to 60 s).
void wait_for(const std::string& file, const std::string& text) {
  for (int i = 0; i < 12000 && slurp(file).find(text) == std::string::npos; ++i) ::usleep(5000);
}

/// Whether process `pid` is alive (and not a zombie).
bool alive(pid_t pid) {
  const std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}


}  // namespace

TEST_CASE("cli sweep: points run as train children, a rerun skips done points, a diverging point is recorded") {
  const std::string dir = scratch_dir("sweep");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  write_text(dir + "/sweep.yaml",
             "base: tiny.yaml\n"
             "set: {train.max_steps: 20, train.eval_every: 10}\n"
             "grid:\n"
             "  train.optimizer.lr: [3e-3, 1e6]\n");
  const std::string out = dir + "/runs";
  CliResult dry = run_cli("sweep " + dir + "/sweep.yaml --dry-run --out " + out, dir);
  REQUIRE(dry.code == 0);
  CHECK(dry.out.find("pending   lr-0.003") != std::string::npos);
  CHECK(dry.out.find("train.optimizer.lr=1000000.0") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));  // a dry run runs nothing

  CliResult r = run_cli("sweep " + dir + "/sweep.yaml --jobs 2 --threads-per-job 1 --out " + out, dir);
  INFO(r.err);
  CHECK(r.code == 1);  // one point diverged
  const json good = point(out, "lr-0.003"), bad = point(out, "lr-1000000.0");
  CHECK(good["state"] == "done");
  CHECK(good["exit_code"] == 0);
  CHECK(good["wall_s"].get<double>() > 0);
  CHECK(good["command"].get<std::string>().find(" train ") != std::string::npos);
  CHECK(bad["state"] == "diverged");
  CHECK(bad["exit_code"] == 1);
  CHECK(bad["error"].get<std::string>().find("non-finite") != std::string::npos);
  for (const char* f : {"config.yaml", "summary.json", "metrics.jsonl", "train.log"})
    CHECK(std::filesystem::exists(out + "/lr-0.003/" + f));
  CHECK(std::filesystem::exists(out + "/lr-1000000.0/diverged.json"));
  CHECK(r.err.find("2 done") == std::string::npos);
  CHECK(r.err.find("1 done, 0 failed, 1 diverged, 0 pending") != std::string::npos);
  // The diverged point is logged as an error, naming its log; the progress line after it counts it
  // as diverged, not failed.
  CHECK(r.err.find("error sweep sweep: point lr=1000000.0 diverged (exit 1)") != std::string::npos);
  const size_t at = r.err.rfind("diverged (exit 1)");
  REQUIRE(at != std::string::npos);
  CHECK(r.err.substr(at, r.err.find('\n', at) - at).find("0 failed, 1 diverged, ") != std::string::npos);
  // The last words name the way to run it again.
  CHECK(r.err.find("1 point(s) failed or diverged and stay so on a rerun; to run them again, rerun this command "
                   "with --retry-failed") != std::string::npos);
  // eval of the sweep folder itself names what it is.
  CliResult eval_sweep = run_cli("eval " + out, dir);
  CHECK(eval_sweep.code == 2);
  CHECK(eval_sweep.err.find(": a sweep folder; give one of its points' run directories") != std::string::npos);
  // A smoke test's hint names its folder: rerun without --out, it would start a new scratch folder.
  write_text(dir + "/failing.yaml", "base: tiny.yaml\nset: {data.test: " + dir + "/no_such.tokens}\n");
  CliResult smoke = run_cli("sweep " + dir + "/failing.yaml --smoke --jobs 1 --threads-per-job 1 --out " + dir + "/smoke", dir);
  CHECK(smoke.code == 1);
  CHECK(smoke.err.find("with --retry-failed --out " + dir + "/smoke (their errors") != std::string::npos);

  // The rerun runs nothing: the done point is kept, the diverged one waits for --retry-failed.
  const std::string summary = slurp(out + "/lr-0.003/summary.json");
  CliResult again = run_cli("sweep " + dir + "/sweep.yaml --out " + out, dir);
  CHECK(again.code == 1);
  CHECK(again.err.find("2 points, 0 to run") != std::string::npos);
  CHECK(again.err.find("with --retry-failed") != std::string::npos);
  CHECK(slurp(out + "/lr-0.003/summary.json") == summary);
  // The dry runs say so too (--dry-run --retry-failed listed the points and not what would run).
  CHECK(run_cli("sweep " + dir + "/sweep.yaml --out " + out + " --dry-run", dir).out.find("\n0 to run\n") !=
        std::string::npos);
  CHECK(run_cli("sweep " + dir + "/sweep.yaml --out " + out + " --dry-run --retry-failed", dir)
            .out.find("1 to run (1 failed or diverged, retried with --retry-failed)") != std::string::npos);
  // --retry-failed runs the diverged point again; while it waits and runs it is not also "failed".
  CliResult retry = run_cli("sweep " + dir + "/sweep.yaml --out " + out + " --retry-failed", dir);
  INFO(retry.err);
  CHECK(retry.code == 1);  // it diverges again
  CHECK(retry.err.find("2 points, 1 to run") != std::string::npos);
  CHECK(retry.err.find("1 done, 0 failed, 1 running, 0 left") != std::string::npos);

  // An index written by an older version, whose recorded specs lack a key added since (with its
  // default), holds the same points: they are read back through today's resolver, not refused.
  json index = json::parse(slurp(out + "/sweep.json"));
  for (json& p : index["points"]) p["spec"]["train"].erase("patience");
  write_text(out + "/sweep.json", index.dump(2));
  CliResult older = run_cli("sweep " + dir + "/sweep.yaml --out " + out, dir);
  INFO(older.err);
  CHECK(older.err.find("2 points, 0 to run") != std::string::npos);

  // A changed point is refused, naming it (a lower train.max_steps is a change); an added point
  // runs alone.
  write_text(dir + "/changed.yaml", "base: tiny.yaml\nset: {train.max_steps: 19, train.eval_every: 10}\n"
                                    "grid:\n  train.optimizer.lr: [3e-3]\n");
  CliResult changed = run_cli("sweep " + dir + "/changed.yaml --out " + out, dir);
  CHECK(changed.code == 2);
  CHECK(changed.err.find("point `lr=0.003`") != std::string::npos);
  CHECK(changed.err.find("train.max_steps is 19") != std::string::npos);
  write_text(dir + "/sweep.yaml", "base: tiny.yaml\nset: {train.max_steps: 20, train.eval_every: 10}\n"
                                  "grid:\n  train.optimizer.lr: [3e-3, 1e6, 1e-3]\n");
  CliResult added = run_cli("sweep " + dir + "/sweep.yaml --out " + out, dir);
  CHECK(added.err.find("3 points, 1 to run") != std::string::npos);
  CHECK(point(out, "lr-0.001")["state"] == "done");

  // A raised train.max_steps continues the done points from their checkpoints.
  write_text(dir + "/longer.yaml", "base: tiny.yaml\nset: {train.max_steps: 30, train.eval_every: 10}\n"
                                   "grid:\n  train.optimizer.lr: [3e-3, 1e-3]\n");
  CliResult longer = run_cli("sweep " + dir + "/longer.yaml --out " + out, dir);
  INFO(longer.err);
  CHECK(longer.err.find("continues to train.max_steps 30") != std::string::npos);
  CHECK(longer.err.find("/longer.yaml shares 2 of its 3 points and adds 0") != std::string::npos);
  CHECK(longer.err.find("resuming lr=0.003") != std::string::npos);
  CHECK(point(out, "lr-0.003")["state"] == "done");
  CHECK(json::parse(slurp(out + "/lr-0.003/summary.json"))["train"]["steps"] == 30);
  CHECK(json::parse(slurp(out + "/lr-0.001/summary.json"))["train"]["steps"] == 30);

  // Bad sweep files: exit 2 with file:line, before anything runs.
  write_text(dir + "/bad.yaml", "base: tiny.yaml\ngrid:\n  model.d_modle: [32]\n");
  CliResult badfile = run_cli("sweep " + dir + "/bad.yaml --out " + dir + "/never", dir);
  CHECK(badfile.code == 2);
  CHECK(badfile.err.find(dir + "/bad.yaml:3") != std::string::npos);
  CHECK(badfile.err.find("did you mean `d_model`") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir + "/never"));
}

TEST_CASE("cli sweep: a killed child and a stopped sweep resume to the numbers of an uninterrupted run") {
  const std::string dir = scratch_dir("sweep_resume");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  write_text(dir + "/sweep.yaml",
             "base: tiny.yaml\nset: {train.max_steps: 200, train.eval_every: 50}\nseeds: [5]\n");
  const std::string args = " --jobs 1 --threads-per-job 1 --out ";
  CliResult whole = run_cli("sweep " + dir + "/sweep.yaml" + args + dir + "/whole", dir);
  REQUIRE(whole.code == 0);

  // 1. The child is killed (SIGKILL, as the OOM killer would) after its step-50 checkpoint.
  const std::string parts = dir + "/parts";
  CliChild sweep = spawn_cli("sweep " + dir + "/sweep.yaml" + args + parts, dir, "first");
  wait_for(parts + "/seed-5/metrics.jsonl", "\"step\":60,");
  const json running = point(parts, "seed-5");
  REQUIRE(running["state"] == "running");
  ::kill(running["pid"].get<int>(), SIGKILL);
  CliResult first = wait_cli(sweep);
  CHECK(first.code == 1);
  CHECK(point(parts, "seed-5")["state"] == "pending");
  CHECK(point(parts, "seed-5")["error"].get<std::string>().find("killed") != std::string::npos);

  // 2. The rerun resumes it; this time the sweep itself gets SIGTERM, forwards it, and exits 143.
  sweep = spawn_cli("sweep " + dir + "/sweep.yaml" + args + parts, dir, "second");
  wait_for(parts + "/seed-5/metrics.jsonl", "\"step\":120,");
  ::kill(sweep.pid, SIGTERM);
  CliResult second = wait_cli(sweep);
  INFO(second.err);
  CHECK(second.code == 143);
  CHECK(second.err.find("resuming") != std::string::npos);
  CHECK(point(parts, "seed-5")["state"] == "pending");
  CHECK(point(parts, "seed-5")["exit_code"] == 143);
  // After the stop nothing is "left" to run in this process: the interrupted point is pending.
  const size_t stop = second.err.find("interrupted (exit 143)");
  REQUIRE(stop != std::string::npos);
  const std::string stop_line = second.err.substr(stop, second.err.find('\n', stop) - stop);
  CHECK(stop_line.find("0 running, 1 pending |") != std::string::npos);

  // 3. The last rerun finishes it: the same numbers as the uninterrupted sweep, exactly.
  const double wall_before = point(parts, "seed-5")["wall_s"].get<double>();
  const auto t3 = std::chrono::steady_clock::now();
  CliResult third = run_cli("sweep " + dir + "/sweep.yaml" + args + parts, dir);
  const double third_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t3).count();
  INFO(third.err);
  REQUIRE(third.code == 0);
  // Its wall time adds the launches that trained it, not only the last one's.
  const double wall = point(parts, "seed-5")["wall_s"].get<double>();
  CHECK(wall_before > 0);
  CHECK(wall > third_s);
  CHECK(wall <= wall_before + third_s);
  const json a = json::parse(slurp(dir + "/whole/seed-5/summary.json"));
  const json b = json::parse(slurp(parts + "/seed-5/summary.json"));
  CHECK(a["valid"]["loss"].get<double>() == b["valid"]["loss"].get<double>());
  CHECK(a["test"]["loss"].get<double>() == b["test"]["loss"].get<double>());
  CHECK(train_losses(slurp(dir + "/whole/seed-5/metrics.jsonl")) == train_losses(slurp(parts + "/seed-5/metrics.jsonl")));
}

TEST_CASE("cli sweep: --grid and --set sweep around an experiment spec or add to a sweep file, as Hydra's multirun") {
  const std::string dir = scratch_dir("sweep_multirun");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  const std::string out = dir + "/multi";
  CliResult r = run_cli("sweep " + dir + "/tiny.yaml --grid train.optimizer.lr=3e-3,1e-3 --set train.max_steps=5 "
                        "--set train.eval_every=5 --jobs 2 --threads-per-job 1 --out " + out,
                        dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const json index = json::parse(slurp(out + "/sweep.json"));
  CHECK(index["name"] == "tiny-multirun");
  REQUIRE(index["points"].size() == 2);
  for (const char* p : {"lr-0.003", "lr-0.001"}) {
    INFO(p);
    CHECK(point(out, p)["state"] == "done");
    CHECK(point(out, p)["jobs"] == 2);
    CHECK(json::parse(slurp(out + "/" + p + "/summary.json"))["train"]["steps"] == 5);
  }
  CHECK(index["command_line"]["grid"] == json::array({"train.optimizer.lr=3e-3,1e-3"}));
  // The report's rerun command, pasted as printed, is the same sweep: nothing to run, the index
  // unchanged (it printed no --grid or --set, and ran a default point into the folder).
  REQUIRE(run_cli("report " + out, dir).code == 0);
  const std::string md = slurp(out + "/report.md");
  const size_t at = md.find("rerun with `transnormer ");
  REQUIRE(at != std::string::npos);
  const size_t from = at + std::string("rerun with `transnormer ").size();
  const std::string rerun = md.substr(from, md.find('`', from) - from);
  CHECK(rerun.find("--grid train.optimizer.lr=3e-3,1e-3") != std::string::npos);
  CHECK(rerun.find("--set train.max_steps=5") != std::string::npos);
  CliResult pasted = run_cli(rerun, dir);
  INFO(pasted.err);
  CHECK(pasted.code == 0);
  CHECK(pasted.err.find("2 points, 0 to run") != std::string::npos);
  const std::string before = slurp(out + "/sweep.json");
  // Without the command line's grid: another sweep, refused naming both; the index untouched.
  CliResult other = run_cli("sweep " + dir + "/tiny.yaml --set train.max_steps=5 --set train.eval_every=5 --out " + out, dir);
  CHECK(other.code == 2);
  CHECK(other.err.find("varying [train.optimizer.lr]") != std::string::npos);
  CHECK(other.err.find("--grid train.optimizer.lr=3e-3,1e-3") != std::string::npos);
  CHECK(other.err.find("this command varies []") != std::string::npos);
  CHECK(slurp(out + "/sweep.json") == before);
  CHECK_FALSE(std::filesystem::exists(out + "/default"));
  // The same grid without one of its --set: refused naming the command line that ran, not the file.
  CliResult fewer_sets = run_cli("sweep " + dir + "/tiny.yaml --set train.max_steps=5 --grid train.optimizer.lr=3e-3,1e-3 "
                                 "--out " + out, dir);
  CHECK(fewer_sets.code == 2);
  CHECK(fewer_sets.err.find("the sweep that ran was given --set train.max_steps=5 --set train.eval_every=5 --grid "
                            "train.optimizer.lr=3e-3,1e-3 and this command --set train.max_steps=5 --grid") !=
        std::string::npos);
  CHECK(fewer_sets.err.find("restore the sweep file") == std::string::npos);
  CHECK(slurp(out + "/sweep.json") == before);
  // A sweep file gains the command line's set and grid; a key it already has is refused, naming both.
  write_text(dir + "/sweep.yaml", "base: tiny.yaml\nset: {train.max_steps: 5}\ngrid:\n  train.optimizer.lr: [3e-3]\n");
  CliResult dry = run_cli("sweep " + dir + "/sweep.yaml --grid model.d_model=16,32 --set train.eval_every=5 --dry-run", dir);
  INFO(dry.err);
  CHECK(dry.code == 0);
  CHECK(dry.out.find("2 points") != std::string::npos);
  CHECK(dry.out.find("model.d_model=16") != std::string::npos);
  CliResult twice = run_cli("sweep " + dir + "/sweep.yaml --set train.max_steps=7 --dry-run", dir);
  CHECK(twice.code == 2);
  CHECK(twice.err.find("--set train.max_steps=7") != std::string::npos);
  CHECK(twice.err.find("already in the sweep file's set (" + dir + "/sweep.yaml:2)") != std::string::npos);
  // The same key in two --grid options (or --set and --grid) names the first, not a sweep file.
  CliResult two = run_cli("sweep " + dir + "/tiny.yaml --grid model.d_model=16,32 --grid model.d_model=48 --dry-run", dir);
  CHECK(two.code == 2);
  CHECK(two.err.find("model.d_model is already given by --grid model.d_model=16,32") != std::string::npos);
  // Hydra's multirun axis written as --set: one value for every point, said so; refused for its
  // type with the --grid that varies it.
  CliResult typed = run_cli("sweep " + dir + "/tiny.yaml --set model.d_model=16,32 --dry-run", dir);
  CHECK(typed.code == 2);
  CHECK(typed.err.find("(--set gives every point one value; to vary it over those values, use --grid "
                       "model.d_model=16,32)") != std::string::npos);
  CliResult text = run_cli("sweep " + dir + "/tiny.yaml --set data.test=a.tokens,b.tokens --dry-run", dir);
  CHECK(text.err.find("--set data.test=a.tokens,b.tokens gives every point the one value 'a.tokens,b.tokens'; to "
                      "vary it over those values, use --grid data.test=a.tokens,b.tokens") != std::string::npos);
  // A seed listed twice would train one run twice: refused at its line.
  write_text(dir + "/seeds.yaml", "base: tiny.yaml\nseeds: [1, 2, 1]\n");
  CliResult seeds = run_cli("sweep " + dir + "/seeds.yaml --dry-run", dir);
  CHECK(seeds.code == 2);
  CHECK(seeds.err.find("seeds.yaml:2: seeds[2]: repeats seed 1 (seeds[0])") != std::string::npos);
  // So would a grid value listed twice (it said "give them distinct names in points:").
  write_text(dir + "/grid.yaml", "base: tiny.yaml\ngrid:\n  model.d_model: [16, 32, 16]\n");
  CliResult grid = run_cli("sweep " + dir + "/grid.yaml --dry-run", dir);
  CHECK(grid.code == 2);
  CHECK(grid.err.find("grid.yaml:3: grid.model.d_model[2]: repeats the value 16 (grid.model.d_model[0])") !=
        std::string::npos);
  CliResult cli_grid = run_cli("sweep " + dir + "/tiny.yaml --grid model.d_model=16,16 --dry-run", dir);
  CHECK(cli_grid.code == 2);
  CHECK(cli_grid.err.find("repeats the value 16") != std::string::npos);
  // An empty grid or points list is refused like an empty seeds list (it ran one default point).
  for (const char* empty : {"grid: {}", "points: []", "zip: {}"}) {
    INFO(empty);
    write_text(dir + "/empty.yaml", std::string("base: tiny.yaml\n") + empty + "\n");
    CliResult e = run_cli("sweep " + dir + "/empty.yaml --dry-run", dir);
    CHECK(e.code == 2);
    CHECK(e.err.find("empty.yaml:2: ") != std::string::npos);
    CHECK(e.err.find("not a non-empty") != std::string::npos);
  }
  CliResult typo = run_cli("sweep " + dir + "/tiny.yaml --grid model.d_modle=16,32 --dry-run", dir);
  CHECK(typo.code == 2);
  CHECK(typo.err.find("did you mean `d_model`") != std::string::npos);
}

TEST_CASE("cli sweep: points from their own bases run from them, and report keeps them apart") {
  const std::string dir = scratch_dir("sweep_bases");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  write_text(dir + "/wide.yaml", "base: tiny.yaml\nmodel: {d_model: 48}\n");
  write_text(dir + "/sweep.yaml",
             "set: {train.max_steps: 10, train.eval_every: 10}\n"
             "points:\n"
             "  - {name: narrow, base: tiny.yaml}\n"
             "  - {name: wide, base: wide.yaml}\n");
  const std::string out = dir + "/runs";
  CliResult r = run_cli("sweep " + dir + "/sweep.yaml --jobs 1 --threads-per-job 1 --out " + out, dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const json narrow = point(out, "narrow"), wide = point(out, "wide");
  CHECK(narrow["state"] == "done");
  CHECK(wide["state"] == "done");
  CHECK(narrow["command"].get<std::string>().find("tiny.yaml") != std::string::npos);
  CHECK(wide["command"].get<std::string>().find("wide.yaml") != std::string::npos);
  CHECK(narrow["spec"]["model"]["d_model"] == 32);
  CHECK(wide["spec"]["model"]["d_model"] == 48);

  // Both points override nothing but the sweep's set: the report still gives each its row.
  REQUIRE(run_cli("report '" + out + "' --out '" + dir + "/report'", dir).code == 0);
  const json report = json::parse(slurp(dir + "/report/report.json"));
  const json& rows = report["rows"];
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["label"] == "narrow");
  CHECK(rows[1]["label"] == "wide");
}

TEST_CASE("cli sweep: a second sweep on a folder in use is refused, and a sweep killed with -9 stops its points") {
  const std::string dir = scratch_dir("sweep_lock");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  write_text(dir + "/sweep.yaml", "base: tiny.yaml\nset: {train.max_steps: 100000, train.eval_every: 50}\nseeds: [5]\n");
  const std::string args = " --jobs 1 --threads-per-job 1 --out ";
  const std::string out = dir + "/sweep";
  CliChild sweep = spawn_cli("sweep " + dir + "/sweep.yaml" + args + out, dir, "first");
  wait_for(out + "/seed-5/metrics.jsonl", "\"step\":60,");
  const json running = point(out, "seed-5");
  REQUIRE(running["state"] == "running");
  const pid_t child = running["pid"].get<int>();

  CliResult second = run_cli("sweep " + dir + "/sweep.yaml" + args + out, dir);
  INFO(second.err);
  CHECK(second.code == 2);
  CHECK(second.err.find("the sweep folder " + out + " is in use") != std::string::npos);
  CHECK(alive(child));  // the first sweep's point trains on

  ::kill(sweep.pid, SIGKILL);
  wait_cli(sweep);
  for (int i = 0; i < 600 && alive(child); ++i) ::usleep(50000);
  CHECK_FALSE(alive(child));  // SIGTERM from the dying sweep: it saved and stopped
  CHECK(slurp(out + "/seed-5/train.log").find("stopped by SIGTERM") != std::string::npos);
  CHECK(std::filesystem::exists(out + "/seed-5/checkpoint.safetensors"));
}

TEST_CASE("cli sweep: a sweep file sharing no point with the sweep in a folder is refused, not merged into its index") {
  const std::string dir = scratch_dir("sweep_other");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  write_text(dir + "/first.yaml", "name: first\nbase: tiny.yaml\nset: {train.max_steps: 2, train.eval_every: 2}\n"
                                  "seeds: [1]\n");
  write_text(dir + "/second.yaml", "name: second\nbase: tiny.yaml\nset: {train.max_steps: 2, train.eval_every: 2}\n"
                                   "grid: {train.optimizer.lr: [1e-3]}\n");
  const std::string out = dir + "/sweep";
  REQUIRE(run_cli("sweep " + dir + "/first.yaml --jobs 1 --threads-per-job 1 --out " + out, dir).code == 0);
  const std::string index = slurp(out + "/sweep.json");
  for (const std::string mode : {"--dry-run", "--jobs 1"}) {
    const CliResult r = run_cli("sweep " + dir + "/second.yaml " + mode + " --out " + out, dir);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(out + " holds the sweep \"first\" of " + dir + "/first.yaml, which has none of the points of " +
                     dir + "/second.yaml") != std::string::npos);
  }
  CHECK(slurp(out + "/sweep.json") == index);  // untouched
  // The same file reached another way, or a copy with the same points: nothing to warn of.
  write_text(dir + "/copy.yaml", slurp(dir + "/first.yaml"));
  for (const std::string file : {"/./first.yaml", "/copy.yaml"}) {
    const CliResult r = run_cli("sweep " + dir + file + " --dry-run --out " + out, dir);
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(r.err.find("shares") == std::string::npos);
    CHECK((r.err.find("has the same points") != std::string::npos) == (file == "/copy.yaml"));
  }
}

TEST_CASE("cli sweep: a link or FIFO under a name the sweep writes is refused (exit 2) before any point runs") {
  const std::string dir = scratch_dir("sweep_links");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  write_text(dir + "/sweep.yaml", "base: tiny.yaml\nset: {train.max_steps: 5}\ngrid:\n  train.seed: [1, 2]\n");
  const std::string victim = dir + "/victim.txt";
  write_text(victim, "the user's file\n");
  const std::string sweep = "sweep " + dir + "/sweep.yaml --jobs 1 --threads-per-job 1 --out ";
  // The point's log, which the sweep appends to (and its child writes through), as a link.
  const std::string linked = dir + "/linked";
  std::filesystem::create_directories(linked + "/seed-1");
  std::filesystem::create_symlink(victim, linked + "/seed-1/train.log");
  CliResult r = run_cli(sweep + linked, dir);
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find(linked + "/seed-1/train.log is a symbolic link") != std::string::npos);
  CHECK(slurp(victim) == "the user's file\n");
  CHECK_FALSE(std::filesystem::exists(linked + "/seed-2"));  // nothing ran
  // sweep.json as a FIFO: reading it blocked for good; as a link: replaced through it.
  const std::string piped = dir + "/piped";
  std::filesystem::create_directories(piped);
  REQUIRE(::mkfifo((piped + "/sweep.json").c_str(), 0600) == 0);
  CliChild child = spawn_cli(sweep + piped, dir, "fifo");
  int status = 0;
  for (int i = 0; i < 3000 && ::waitpid(child.pid, &status, WNOHANG) == 0; ++i) ::usleep(10000);
  if (::kill(child.pid, 0) == 0 && ::waitpid(child.pid, &status, WNOHANG) == 0) {
    ::kill(child.pid, SIGKILL);
    ::waitpid(child.pid, &status, 0);
    FAIL("the sweep blocked on a FIFO sweep.json");
  }
  CHECK(WEXITSTATUS(status) == 2);
  CHECK(slurp(child.err).find(piped + "/sweep.json is a FIFO") != std::string::npos);
}

TEST_CASE("cli sweep: its points run the sweep's own binary, also after that file is rebuilt or deleted") {
  const std::string dir = scratch_dir("sweep_own_binary");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  write_text(dir + "/sweep.yaml", "base: tiny.yaml\nset: {train.max_steps: 150, train.eval_every: 50}\nseeds: [5, 6]\n");
  std::filesystem::create_directories(dir + "/bin");
  const std::string copy = dir + "/bin/transnormer";
  std::filesystem::copy_file(binary(), copy);
  const std::string out = dir + "/sweep";
  const pid_t sweep = spawn_command_line("env TRANSNORMER_DATA='" + data_root() + "' OMP_NUM_THREADS=2 '" + copy +
                                             "' sweep " + dir + "/sweep.yaml --jobs 1 --threads-per-job 1 --out " + out,
                                         dir + "/sweep.stdout.txt", dir + "/sweep.stderr.txt");
  wait_for(out + "/seed-5/metrics.jsonl", "\"step\":50,");
  std::filesystem::remove(copy);  // as a rebuild replaces it: the path now names no file
  int status = 0;
  ::waitpid(sweep, &status, 0);
  INFO(slurp(dir + "/sweep.stderr.txt"));
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(point(out, "seed-6")["state"] == "done");  // started after the file was gone
  CHECK(std::filesystem::exists(out + "/seed-6/summary.json"));
}

TEST_CASE("cli sweep: a folder of a run is no sweep folder, a point folder holding a run the sweep never started is refused, and a point trained beyond its sweep is flagged") {
  const std::string dir = scratch_dir("sweep_folders");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  write_text(dir + "/sweep.yaml",
             "base: tiny.yaml\nset: {train.max_steps: 6, train.eval_every: 6}\ngrid:\n  train.optimizer.lr: [3e-3, 1e-3]\n");
  // --out of a run: refused, the run left as it was.
  REQUIRE(run_cli("train " + dir + "/tiny.yaml --set train.max_steps=2 --threads 1 --out " + dir + "/run", dir).code == 0);
  const CliResult into_run = run_cli("sweep " + dir + "/sweep.yaml --jobs 1 --threads-per-job 1 --out " + dir + "/run", dir);
  CHECK(into_run.code == 2);
  CHECK(into_run.err.find(dir + "/run holds a run (its config.yaml, metrics or checkpoint): a sweep goes to a folder "
                          "of its own") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir + "/run/sweep.json"));
  // A point's folder holding a run this sweep never started: refused before anything runs.
  const std::string out = dir + "/sweep";
  std::filesystem::create_directories(out);
  std::filesystem::copy(dir + "/run", out + "/lr-0.003");
  const CliResult foreign = run_cli("sweep " + dir + "/sweep.yaml --jobs 1 --threads-per-job 1 --out " + out, dir);
  CHECK(foreign.code == 2);
  CHECK(foreign.err.find("point `lr=0.003`: its folder " + out + "/lr-0.003 holds a run this sweep did not start; "
                         "move that folder away") != std::string::npos);
  std::filesystem::remove_all(out + "/lr-0.003");
  const CliResult ran = run_cli("sweep " + dir + "/sweep.yaml --jobs 1 --threads-per-job 1 --out " + out, dir);
  INFO(ran.err);
  REQUIRE(ran.code == 0);
  // A finished point's resume hint is the sweep's command, not a resume that would set it apart.
  const CliResult hint = run_cli("train --resume " + out + "/lr-0.003", dir);
  CHECK(hint.code == 0);
  CHECK(hint.err.find("It is a point of the sweep in " + out + ": to train every point longer, rerun the sweep's "
                      "command") != std::string::npos);
  // Trained on alone anyway: its row says so.
  REQUIRE(run_cli("train --resume " + out + "/lr-0.003 --set train.max_steps=9 --threads 1", dir).code == 0);
  const CliResult report = run_cli("report " + out, dir);
  CHECK(report.code == 0);
  CHECK(report.err.find("was trained beyond its sweep (train.max_steps 9 (the sweep's 6))") != std::string::npos);
  CHECK(slurp(out + "/report.md").find("trained beyond the sweep: train.max_steps 9 (the sweep's 6)") !=
        std::string::npos);
}

TEST_CASE("cli sweep: an index whose points never ran takes another command line") {
  const std::string dir = scratch_dir("sweep_never_ran");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  const std::string out = dir + "/sweep";
  REQUIRE(run_cli("sweep " + dir + "/tiny.yaml --grid train.seed=1,2 --set train.max_steps=2 --jobs 1 "
                  "--threads-per-job 1 --out " + out, dir).code == 0);
  // As a sweep whose launch failed before any point ran leaves its index (a refused Slurm
  // submission): every point pending, never launched, its folder empty.
  json index = json::parse(slurp(out + "/sweep.json"));
  for (json& p : index["points"]) {
    p["state"] = "pending";
    p.erase("command");
    p.erase("exit_code");
    p.erase("wall_s");
    std::filesystem::remove_all(out + "/" + p["dir"].get<std::string>());
  }
  write_text(out + "/sweep.json", index.dump(2));
  // Another --set is then no other sweep: nothing ran to keep apart.
  const CliResult again = run_cli("sweep " + dir + "/tiny.yaml --grid train.seed=1,2 --set train.max_steps=3 --jobs 1 "
                                  "--threads-per-job 1 --out " + out, dir);
  INFO(again.err);
  CHECK(again.code == 0);
  CHECK(json::parse(slurp(out + "/sweep.json"))["command_line"]["set"] == json::array({"train.max_steps=3"}));
  // Once a point ran, the same change is refused (the points would mix).
  const CliResult mixed = run_cli("sweep " + dir + "/tiny.yaml --grid train.seed=1,2 --set train.max_steps=2 --jobs 1 "
                                  "--threads-per-job 1 --out " + out, dir);
  CHECK(mixed.code == 2);
}
