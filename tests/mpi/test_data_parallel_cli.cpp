// Data-parallel training through the CLI under Open MPI's mpirun (core/platform/comm, issue 19): two ranks
// against one process with the same global batch, rank 0 alone writing, a stop signal to one rank,
// a killed rank, resume with another number of ranks, and what is refused. Skipped (with a
// message) where mpirun is not installed; scripts/setup.sh installs it.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "core/platform/io/safetensors.h"
#include "tests/app/cli_runner.h"
#include "tests/app/tiny_spec.h"

using namespace tn;
using namespace tn::test;
using json = nlohmann::json;

namespace {

constexpr const char* kAllowRoot = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ";

bool have_mpirun() { return std::system("command -v mpirun > /dev/null 2>&1") == 0; }

/// `mpirun -np N transnormer <args>` as root or not, one thread per rank, with the tests' data root.
std::string mpi_args(int ranks, const std::string& args) {
  return "mpirun --oversubscribe -np " + std::to_string(ranks) +
         " -x OMP_NUM_THREADS=1 -x TRANSNORMER_DATA='" + data_root() + "' '" + binary() + "' " + args;
}

/// Runs `mpi_command` (from mpi_args) with mpirun's root permission variables; exit code and output.
CliResult run_shell(const std::string& mpi_command, const std::string& scratch, const std::string& tag = "mpi") {
  std::filesystem::create_directories(scratch);
  return run_command_line(std::string(kAllowRoot) + mpi_command, scratch + "/" + tag + ".stdout.txt",
                          scratch + "/" + tag + ".stderr.txt");
}

/// Starts `mpi_command` in the background (run_shell's environment); its pid.
pid_t spawn_shell(const std::string& mpi_command, const std::string& scratch, const std::string& tag) {
  return spawn_command_line("env " + std::string(kAllowRoot) + mpi_command, scratch + "/" + tag + ".stdout.txt",
                            scratch + "/" + tag + ".stderr.txt");
}

/// Trains `args` + DIR/one in one process and `args` + DIR/two on `ranks` ranks (the data-parallel
/// run's folder is "two" whatever their number); both must succeed. Returns the ranks' result.
CliResult train_one_and_two(const std::string& args, const std::string& dir, int ranks = 2) {
  const CliResult one = run_cli(args + dir + "/one", dir);
  INFO(one.err);
  REQUIRE(one.code == 0);
  const CliResult two = run_shell(mpi_args(ranks, args + dir + "/two"), dir);
  INFO(two.err);
  REQUIRE(two.code == 0);
  return two;
}

/// Checks that DIR/one and DIR/two logged `steps` training losses, each pair within `relative`.
void check_losses_agree(const std::string& dir, size_t steps, double relative) {
  const auto a = train_losses(slurp(dir + "/one/metrics.jsonl"));
  const auto b = train_losses(slurp(dir + "/two/metrics.jsonl"));
  REQUIRE(a.size() == steps);
  REQUIRE(b.size() == steps);
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].first == b[i].first);
    CHECK(std::fabs(a[i].second - b[i].second) <= relative * std::fabs(a[i].second));
  }
}

/// The pid of rank `rank` among the processes whose command line mentions `marker` (0: none yet).
pid_t rank_pid(const std::string& marker, int rank) {
  const std::string want = "OMPI_COMM_WORLD_RANK=" + std::to_string(rank);
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = slurp(entry.path().string() + "/cmdline");
    if (cmdline.find(marker) == std::string::npos || cmdline.rfind("mpirun", 0) == 0) continue;
    std::string environ = slurp(entry.path().string() + "/environ");
    for (char& c : environ)
      if (c == '\0') c = '\n';
    if (environ.find("\n" + want + "\n") != std::string::npos || environ.rfind(want + "\n", 0) == 0)
      return static_cast<pid_t>(std::stol(name));
  }
  return 0;
}

/// Waits up to `seconds` for `pid`; its exit code, or -1 if it is still running (then killed).
int wait_for(pid_t pid, int seconds) {
  for (int i = 0; i < seconds * 20; ++i) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    ::usleep(50000);
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return -1;
}

/// The largest |a − b| over every tensor of two checkpoints with the same names.
double max_weight_difference(const std::string& a, const std::string& b) {
  const SafetensorsFile fa = load_safetensors(a), fb = load_safetensors(b);
  double worst = 0;
  for (const auto& [name, ta] : fa.tensors) {
    const Tensor& tb = fb.tensors.at(name);
    REQUIRE(ta.numel() == tb.numel());
    for (int64_t i = 0; i < ta.numel(); ++i) worst = std::max(worst, std::fabs(double(ta.data()[i]) - tb.data()[i]));
  }
  return worst;
}

}  // namespace

TEST_CASE("cli mpi: 2 ranks train as one process with the same global batch, and rank 0 alone writes") {
  if (!have_mpirun()) {
    MESSAGE("mpirun not installed: skipped (scripts/setup.sh installs openmpi-bin)");
    return;
  }
  const std::string dir = scratch_dir("mpi_agree");
  const std::string spec = dir + "/tiny.yaml";
  write_text(spec, tiny_spec(dir));
  const std::string args = "train " + spec + " --set model.dropout=0 --set train.max_steps=20 --set train.log_every=1 --threads 1 --out ";
  const CliResult two = train_one_and_two(args, dir);
  // The loss of every step, over the same 4 sequences split 2 + 2, agrees to float-sum order.
  check_losses_agree(dir, 20, 1e-5);
  // After 20 AdamW updates (lr 3e-3) the weights differ by float reduction order only.
  CHECK(max_weight_difference(dir + "/one/checkpoint.safetensors", dir + "/two/checkpoint.safetensors") < 1e-3);
  const json sa = json::parse(slurp(dir + "/one/summary.json")), sb = json::parse(slurp(dir + "/two/summary.json"));
  CHECK(std::fabs(sa["test"]["loss"].get<double>() - sb["test"]["loss"].get<double>()) < 1e-4);
  CHECK(sa["train"]["tokens"] == sb["train"]["tokens"]);  // the same data, counted over both ranks
  CHECK(sa["test"]["tokens"] == sb["test"]["tokens"]);    // each rank scored half the blocks; summed
  // How each ran, recorded: 1 rank started directly, 2 ranks by mpirun (their tokens/s a sum).
  CHECK(sa["train"]["ranks"] == 1);
  CHECK(sb["train"]["ranks"] == 2);
  const json ra = json::parse(slurp(dir + "/one/run.json")), rb = json::parse(slurp(dir + "/two/run.json"));
  CHECK(ra["sessions"][0]["ranks"] == 1);
  CHECK(ra["sessions"][0]["launcher"]["name"] == "direct");
  CHECK(rb["sessions"][0]["ranks"] == 2);
  CHECK(rb["sessions"][0]["launcher"]["name"] == "mpirun");
  // The report of each run shows its ranks beside its tokens/s (the two runs, of one spec, would
  // share a row).
  for (const auto& run : {std::pair<std::string, std::string>{"one", " | 1 × 1 | "}, {"two", " | 2 × 1 | "}}) {
    const std::string& name = run.first;
    const std::string& shown = run.second;
    const CliResult report = run_cli("report " + dir + "/" + name + " --out " + dir + "/report_" + name, dir);
    INFO(report.err);
    REQUIRE(report.code == 0);
    const std::string md = slurp(dir + "/report_" + name + "/report.md");
    CHECK(md.find("| ranks × threads |") != std::string::npos);
    CHECK(md.find(shown) != std::string::npos);
    CHECK(slurp(dir + "/report_" + name + "/report.csv").find(",speed_jobs,ranks,threads,") != std::string::npos);
  }

  // One writer: one summary line in the logs, rank 1 silent but for warnings, train.log rank 0's.
  size_t done_lines = 0;
  for (size_t at = two.err.find("done in"); at != std::string::npos; at = two.err.find("done in", at + 1)) ++done_lines;
  CHECK(done_lines == 1);
  CHECK(two.err.find("[rank 0/2]") != std::string::npos);
  CHECK(two.err.find("[rank 1/2] info") == std::string::npos);
  CHECK(slurp(dir + "/two/train.log").find("data-parallel: rank 0 of 2") != std::string::npos);
}

TEST_CASE("cli mpi: more ranks than a batch has sequences (3 ranks, batch 2): the rank without one skips the step, and the run is one process's") {
  if (!have_mpirun()) {
    MESSAGE("mpirun not installed: skipped");
    return;
  }
  const std::string dir = scratch_dir("mpi_more_ranks");
  const std::string spec = dir + "/tiny.yaml";
  write_text(spec, tiny_spec(dir));
  const std::string args = "train " + spec + " --set model.dropout=0 --set train.batch_size=2 --set train.max_steps=6 " +
                           "--set train.eval_every=3 --set train.log_every=1 --threads 1 --out ";
  train_one_and_two(args, dir, 3);  // 3 ranks exited 1: "[make_batch] no blocks given" on rank 2
  check_losses_agree(dir, 6, 1e-5);
  const json sa = json::parse(slurp(dir + "/one/summary.json")), sb = json::parse(slurp(dir + "/two/summary.json"));
  CHECK(sa["train"]["tokens"] == sb["train"]["tokens"]);
  CHECK(std::fabs(sa["test"]["loss"].get<double>() - sb["test"]["loss"].get<double>()) < 1e-4);
}

TEST_CASE("cli mpi: SIGTERM to one rank stops both at one step, and the run resumes in one process") {
  if (!have_mpirun()) {
    MESSAGE("mpirun not installed: skipped");
    return;
  }
  const std::string dir = scratch_dir("mpi_stop");
  const std::string spec = dir + "/tiny.yaml";
  write_text(spec, tiny_spec(dir));
  const std::string args = "train " + spec + " --set model.dropout=0 --set train.max_steps=300 --set train.eval_every=150 --threads 1 --out ";
  const CliResult whole = run_cli(args + dir + "/whole", dir);
  REQUIRE(whole.code == 0);

  const pid_t job = spawn_shell(mpi_args(2, args + dir + "/parts"), dir, "parts");
  const std::string metrics = dir + "/parts/metrics.jsonl";
  for (int i = 0; i < 6000 && slurp(metrics).find("\"step\":20,") == std::string::npos; ++i) ::usleep(5000);
  const pid_t rank1 = rank_pid(dir + "/parts", 1);
  REQUIRE(rank1 > 0);
  ::kill(rank1, SIGTERM);  // one rank only, as a node's scheduler might
  const int code = wait_for(job, 120);
  const std::string err = slurp(dir + "/parts.stderr.txt");
  INFO(err);
  REQUIRE(code != -1);  // no hang
  CHECK(code == 143);
  CHECK(err.find("[rank 0/2] warning stopped by SIGTERM after step") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir + "/parts/summary.json"));
  REQUIRE(std::filesystem::exists(dir + "/parts/checkpoint.safetensors"));

  // Resumed with 1 process instead of 2: the same global batches, so the same run.
  const CliResult resumed = run_cli("train --resume " + dir + "/parts", dir);
  INFO(resumed.err);
  REQUIRE(resumed.code == 0);
  const auto a = train_losses(slurp(dir + "/whole/metrics.jsonl"));
  const auto b = train_losses(slurp(dir + "/parts/metrics.jsonl"));
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK(std::fabs(a[i].second - b[i].second) <= 1e-4 * std::fabs(a[i].second));
  const json sa = json::parse(slurp(dir + "/whole/summary.json")), sb = json::parse(slurp(dir + "/parts/summary.json"));
  CHECK(std::fabs(sa["test"]["loss"].get<double>() - sb["test"]["loss"].get<double>()) < 1e-3);
}

TEST_CASE("cli mpi: a killed rank ends the job with an error, not a hang") {
  if (!have_mpirun()) {
    MESSAGE("mpirun not installed: skipped");
    return;
  }
  const std::string dir = scratch_dir("mpi_kill");
  const std::string spec = dir + "/tiny.yaml";
  write_text(spec, tiny_spec(dir));
  const pid_t job = spawn_shell(mpi_args(2, "train " + spec + " --set train.max_steps=100000 --threads 1 --out " + dir + "/run"),
                                dir, "run");
  for (int i = 0; i < 6000 && slurp(dir + "/run/metrics.jsonl").find("\"step\":10,") == std::string::npos; ++i) ::usleep(5000);
  const pid_t rank1 = rank_pid(dir + "/run", 1);
  REQUIRE(rank1 > 0);
  ::kill(rank1, SIGKILL);
  const int code = wait_for(job, 60);
  INFO(slurp(dir + "/run.stderr.txt"));
  CHECK(code != -1);
  CHECK(code != 0);
  CHECK(rank_pid(dir + "/run", 0) == 0);  // rank 0 is gone too
}

TEST_CASE("cli mpi: BatchNorm statistics are combined across ranks (SyncBatchNorm), so 2 ranks train as one process") {
  if (!have_mpirun()) {
    MESSAGE("mpirun not installed: skipped");
    return;
  }
  const std::string dir = scratch_dir("mpi_bn");
  const std::string spec = dir + "/tiny.yaml";
  write_text(spec, tiny_spec(dir));
  const std::string args = "train " + spec +
                           " --set model.norm=batchnorm --set model.dropout=0 --set train.max_steps=20 --set train.log_every=1"
                           " --threads 1 --out ";
  train_one_and_two(args, dir);
  // With each rank's own statistics (2 sequences of 32 tokens instead of 4) the first loss would
  // already differ; combined, every step agrees to float-sum order.
  check_losses_agree(dir, 20, 1e-5);
  // The running statistics (eval mode) follow the same global batches.
  const json sa = json::parse(slurp(dir + "/one/summary.json")), sb = json::parse(slurp(dir + "/two/summary.json"));
  CHECK(std::fabs(sa["test"]["loss"].get<double>() - sb["test"]["loss"].get<double>()) < 1e-4 * sa["test"]["loss"].get<double>());
}

TEST_CASE("cli mpi: verbs other than train are refused under mpirun with exit 2") {
  if (!have_mpirun()) {
    MESSAGE("mpirun not installed: skipped");
    return;
  }
  const std::string dir = scratch_dir("mpi_refused");
  const std::string spec = dir + "/tiny.yaml";
  write_text(spec, tiny_spec(dir));
  const CliResult data = run_shell(mpi_args(2, "data stats " + spec), dir, "data");
  CHECK(data.code == 2);
  CHECK(data.err.find("`data` runs in one process") != std::string::npos);
}

TEST_CASE("cli mpi: an LRA ListOps encoder (BatchNorm, padded batches by length) trains and evaluates on 2 ranks as in one process") {
  if (!have_mpirun()) {
    MESSAGE("mpirun not installed: skipped");
    return;
  }
  const std::string dir = scratch_dir("mpi_listops");
  const CliResult gen = run_cli("data generate listops --out " + dir + "/ops --train 64 --valid 24 --test 24"
                                " --min-length 5 --max-length 60 --seed 4", dir);
  REQUIRE(gen.code == 0);
  write_text(dir + "/listops.yaml",
             "task: {name: sequence_classification, batching: by_length}\n"
             "model: {head: classification, num_classes: 10, arch: encoder, d_model: 16, n_layers: 2, n_heads: 2,\n"
             "  diag_layers: 1, max_positions: 128, norm: batchnorm, relative: none, dropout: 0.0,\n"
             "  attention: {norm_attention: {kernel: elu, norm: batchnorm}, diag: {block_size: 8, inner: relu, norm: batchnorm}},\n"
             "  channel_mixer: {type: ffn, d_ff: 32, activation: gelu}}\n"
             "data: {reader: listops, dir: " + dir + "/ops, max_length: 128}\n"
             "train: {batch_size: 8, max_steps: 16, seed: 5, log_every: 1, eval_every: 8, eval_batch_size: 5,\n"
             "        optimizer: {name: adamw, lr: 3e-3}}\n");
  const std::string args = "train " + dir + "/listops.yaml --threads 1 --out ";
  train_one_and_two(args, dir);
  check_losses_agree(dir, 16, 1e-5);
  // Evaluation shared out (each rank every other batch of 5): the same 24 predictions and metrics.
  const json sa = json::parse(slurp(dir + "/one/summary.json")), sb = json::parse(slurp(dir + "/two/summary.json"));
  CHECK(sb["test"]["examples"] == 24);
  CHECK(sa["test"]["accuracy"] == sb["test"]["accuracy"]);
  CHECK(std::fabs(sa["test"]["loss"].get<double>() - sb["test"]["loss"].get<double>()) < 1e-4);
  const std::string pa = slurp(dir + "/one/predictions/test.jsonl"), pb = slurp(dir + "/two/predictions/test.jsonl");
  CHECK(std::count(pb.begin(), pb.end(), '\n') == 24);
  std::istringstream la(pa), lb(pb);
  for (std::string x, y; std::getline(la, x) && std::getline(lb, y);) {
    const json ra = json::parse(x), rb = json::parse(y);
    CHECK(ra["id"] == rb["id"]);
    CHECK(ra["prediction"] == rb["prediction"]);
    CHECK(std::fabs(ra["score"].get<double>() - rb["score"].get<double>()) < 1e-4);
  }
}

TEST_CASE("cli mpi: a sweep's points train data-parallel with --ranks-per-point, under mpirun") {
  if (!have_mpirun()) {
    MESSAGE("mpirun not installed: skipped");
    return;
  }
  const std::string dir = scratch_dir("mpi_sweep");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  write_text(dir + "/sweep.yaml", "base: tiny.yaml\nset: {train.max_steps: 10}\ngrid:\n  train.seed: [1]\n");
  // Without Open MPI's root variables: the sweep gives mpirun --allow-run-as-root itself when root.
  const CliResult r = run_cli("sweep " + dir + "/sweep.yaml --ranks-per-point 2 --jobs 1 --threads-per-job 1 --out " +
                                  dir + "/runs",
                              dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const json p = json::parse(slurp(dir + "/runs/sweep.json"))["points"][0];
  CHECK(p["state"] == "done");
  CHECK(p["ranks"] == 2);
  CHECK(p["command"].get<std::string>().rfind("mpirun -np 2 --bind-to none ", 0) == 0);
  const std::string log = slurp(dir + "/runs/seed-1/train.log");
  CHECK(log.find("data-parallel: rank 0 of 2") != std::string::npos);
  CHECK(log.find("[rank 1/2]") == std::string::npos);  // rank 1 logs warnings only

  // Options that need the Slurm launcher are refused without it.
  const CliResult detach = run_cli("sweep " + dir + "/sweep.yaml --detach --out " + dir + "/runs", dir);
  CHECK(detach.code == 2);
  CHECK(detach.err.find("--detach needs --launcher slurm") != std::string::npos);
}
