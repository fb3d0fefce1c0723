// `transnormer sweep --launcher slurm` on a real one-node Slurm cluster, which ctest starts before
// these tests and stops after them (scripts/slurm_cluster.sh, the `slurm` fixture in
// CMakeLists.txt). Where no cluster could be started (not root, Slurm not installed), the test
// exits 77 and ctest reports it skipped, with the reason.
#include <doctest/doctest.h>

#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/app/cli_runner.h"
#include "tests/app/tiny_spec.h"

using namespace tn::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// The cluster's slurm.conf, also put in this process's SLURM_CONF for the commands it starts;
/// exits 77 (skipped) when the fixture did not start one.
std::string slurm_conf() {
  const std::string conf = std::string(TN_SLURM_DIR) + "/slurm.conf";
  if (!fs::exists(conf)) {
    const std::string why = slurp(std::string(TN_SLURM_DIR) + "/skipped");
    MESSAGE("skipped: no Slurm cluster: " << (why.empty() ? "the slurm_cluster_start fixture did not run" : why));
    std::fflush(stdout);
    std::_Exit(77);
  }
  ::setenv("SLURM_CONF", conf.c_str(), 1);
  return conf;
}

/// The shell command line of `transnormer <args>` run in `dir`, as a user in a sweep's folder runs it.
std::string in_dir(const std::string& dir, const std::string& args) {
  return "cd '" + dir + "' && TRANSNORMER_DATA='" + data_root() + "' exec '" + binary() + "' " + args;
}

CliResult sweep_cli(const std::string& args, const std::string& dir) {
  return run_command_line(in_dir(dir, args), dir + "/stdout.txt", dir + "/stderr.txt");
}

json points(const std::string& sweep_dir) { return json::parse(slurp(sweep_dir + "/sweep.json"))["points"]; }

size_t scripts_in(const std::string& sweep_dir) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(sweep_dir + "/slurm")) n += e.path().extension() == ".sh";
  return n;
}

/// A scratch folder with the tests' tiny spec and a two-seed sweep of it.
std::string sweep_folder(const std::string& tag) {
  const std::string dir = scratch_dir("slurm_" + tag);
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  write_text(dir + "/sweep.yaml", "name: tiny_slurm\nbase: tiny.yaml\ngrid:\n  train.seed: [1, 2]\n");
  return dir;
}

}  // namespace

TEST_CASE("sweep on Slurm: two points run as one job array, sweep.json records their tasks, report reads it, a rerun submits nothing") {
  slurm_conf();
  const std::string dir = sweep_folder("two");
  CliResult r = sweep_cli("sweep sweep.yaml --launcher slurm --out runs", dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.err.find("submitted 2 point(s) as Slurm job array") != std::string::npos);
  const json ran = points(dir + "/runs");
  REQUIRE(ran.size() == 2);
  for (int i = 0; i < 2; ++i) {
    const json& p = ran[i];
    CHECK(p["state"] == "done");
    CHECK(p["exit_code"] == 0);
    CHECK(p["launcher"] == "slurm");
    CHECK(p["slurm_job"] == ran[0]["slurm_job"]);
    CHECK(p["slurm_task"] == i);
    CHECK(fs::exists(dir + "/runs/" + p["dir"].get<std::string>() + "/summary.json"));
    const std::string log = slurp(dir + "/runs/" + p["dir"].get<std::string>() + "/train.log");
    CHECK(log.find("Slurm job " + p["slurm_job"].get<std::string>() + "_" + std::to_string(i) + " on ") !=
          std::string::npos);
    // The run records its Slurm array job and task.
    const json launcher = json::parse(slurp(dir + "/runs/" + p["dir"].get<std::string>() + "/run.json"))["sessions"][0]["launcher"];
    CHECK(launcher["name"] == "slurm");
    CHECK(launcher["array_job"] == p["slurm_job"]);
    CHECK(launcher["array_task"] == std::to_string(i));
  }
  CHECK(scripts_in(dir + "/runs") == 1);

  CliResult report = sweep_cli("report runs --out report", dir);
  INFO(report.err);
  CHECK(report.code == 0);
  const std::string md = slurp(dir + "/report/report.md");
  CHECK(md.find("| tiny_slurm | done |") != std::string::npos);  // both seeds in one row
  CHECK(md.find("[seed 1](../runs/seed-1) [seed 2](../runs/seed-2)") != std::string::npos);
  // The points got the data root from $TRANSNORMER_DATA; the rerun line passes it on, from the
  // folder the sweep ran in (its paths are relative to it).
  CHECK(md.find("rerun with `cd " + dir + " && transnormer sweep sweep.yaml --out runs --launcher slurm "
                "--threads-per-job 1 --data-root " + data_root() + "`") != std::string::npos);

  // The rerun finds both points done: nothing is submitted.
  CliResult again = sweep_cli("sweep sweep.yaml --launcher slurm --out runs", dir);
  CHECK(again.code == 0);
  CHECK(again.err.find("2 points, 0 to run") != std::string::npos);
  CHECK(scripts_in(dir + "/runs") == 1);
}

TEST_CASE("sweep on Slurm: --detach leaves the tasks queued, a rerun follows them, SIGTERM stops them with checkpoints, the next rerun resumes") {
  slurm_conf();
  const std::string dir = sweep_folder("follow");
  CliResult detached = sweep_cli("sweep sweep.yaml --launcher slurm --out runs --set train.max_steps=30 --detach", dir);
  INFO(detached.err);
  REQUIRE(detached.code == 0);
  for (const json& p : points(dir + "/runs")) CHECK(p["state"] == "queued");
  CliResult followed = sweep_cli("sweep sweep.yaml --launcher slurm --out runs --set train.max_steps=30", dir);
  INFO(followed.err);
  CHECK(followed.code == 0);
  CHECK(followed.err.find("0 to run, 2 followed in Slurm") != std::string::npos);
  for (const json& p : points(dir + "/runs")) CHECK(p["state"] == "done");
  CHECK(scripts_in(dir + "/runs") == 1);

  // A long sweep, stopped once both tasks run: each saves a checkpoint and is pending again.
  const std::string long_set = " --set train.max_steps=1000 --set train.eval_every=500";
  CliChild sweep;
  sweep.out = dir + "/long.out";
  sweep.err = dir + "/long.err";
  sweep.pid = spawn_command_line("sh -c \"" + in_dir(dir, "sweep sweep.yaml --launcher slurm --out long" + long_set) + "\"",
                                 sweep.out, sweep.err);
  bool both_running = false;
  for (int i = 0; i < 1200 && !both_running; ++i) {  // up to 60 s
    ::usleep(50000);
    if (!fs::exists(dir + "/long/sweep.json")) continue;
    try {
      const json p = points(dir + "/long");
      both_running = p[0]["state"] == "running" && p[1]["state"] == "running" &&
                     slurp(dir + "/long/" + p[1]["dir"].get<std::string>() + "/train.log").find("step     10/") !=
                         std::string::npos;
    } catch (const std::exception&) {
    }
  }
  REQUIRE(both_running);
  ::kill(sweep.pid, SIGTERM);
  const CliResult stopped = wait_cli(sweep);
  INFO(stopped.err);
  CHECK(stopped.code == 128 + SIGTERM);
  for (const json& p : points(dir + "/long")) {
    CHECK(p["state"] == "pending");
    CHECK(p["exit_code"] == 143);
    CHECK(fs::exists(dir + "/long/" + p["dir"].get<std::string>() + "/checkpoint.safetensors"));
  }
  CliResult resumed = sweep_cli("sweep sweep.yaml --launcher slurm --out long" + long_set, dir);
  INFO(resumed.err);
  CHECK(resumed.code == 0);
  CHECK(resumed.err.find("resuming") != std::string::npos);
  for (const json& p : points(dir + "/long")) CHECK(p["state"] == "done");
  CHECK(scripts_in(dir + "/long") == 2);
}
