// The Slurm launcher's pieces that need no cluster: reading squeue and scontrol answers (lines as
// Slurm 22.05 prints them, from a one-node cluster), splitting --slurm options, and the batch
// script, run by bash as Slurm would run one of its array tasks.
#include <doctest/doctest.h>

#include <cstdlib>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "experiments/sweeps/slurm_launcher.h"
#include "experiments/sweeps/slurm_status.h"
#include "tests/temp_dir.h"

using namespace tn;

TEST_CASE("slurm status: squeue lines give each array task's state and node") {
  const auto tasks = parse_squeue_tasks("0|PENDING|\n2|RUNNING|localhost\nnot a task line\n3|COMPLETING|node7\n");
  REQUIRE(tasks.size() == 3);
  CHECK(tasks[0].task == 0);
  CHECK(tasks[0].state == "PENDING");
  CHECK(tasks[0].node.empty());
  CHECK(tasks[1].task == 2);
  CHECK(tasks[1].node == "localhost");
  CHECK(tasks[2].state == "COMPLETING");
  CHECK_FALSE(slurm_state_started("PENDING"));
  CHECK_FALSE(slurm_state_started("CONFIGURING"));
  CHECK(slurm_state_started("RUNNING"));
  CHECK(slurm_state_started("COMPLETING"));
  CHECK(parse_squeue_tasks("").empty());
}

TEST_CASE("slurm status: scontrol's record of an ended task gives its exit code, whether Slurm ended it, and its run time") {
  // A task whose command exited 1 (as scontrol -o printed it, shortened).
  const std::string failed =
      "JobId=3 ArrayJobId=1 ArrayTaskId=1 JobName=wrap UserId=root(0) Priority=1 JobState=FAILED "
      "Reason=NonZeroExitCode Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 ExitCode=1:0 RunTime=00:00:02 "
      "TimeLimit=UNLIMITED Command=(null) WorkDir=/tmp/some dir";
  const auto end = parse_scontrol_end(failed);
  REQUIRE(end);
  CHECK(end->state == "FAILED");
  CHECK(end->exit_code == 1);
  CHECK_FALSE(end->killed);
  REQUIRE(end->run_s);
  CHECK(*end->run_s == 2.0);

  const auto done = parse_scontrol_end("JobId=9 JobState=COMPLETED Reason=None ExitCode=0:0 RunTime=1-02:03:04");
  REQUIRE(done);
  CHECK(done->exit_code == 0);
  CHECK(*done->run_s == 86400 + 2 * 3600 + 3 * 60 + 4);

  // Ended by a signal (SIGTERM = 15): 128 + 15, as a shell reports it; killed.
  const auto signalled = parse_scontrol_end("JobId=9 JobState=FAILED ExitCode=0:15 RunTime=00:10");
  REQUIRE(signalled);
  CHECK(signalled->exit_code == 143);
  CHECK(signalled->killed);
  CHECK(*signalled->run_s == 10.0);

  // Slurm's own ends: the point was stopped, not failed (a rerun resumes it).
  for (const char* state : {"CANCELLED", "TIMEOUT", "PREEMPTED", "NODE_FAIL", "OUT_OF_MEMORY"}) {
    const auto e = parse_scontrol_end(std::string("JobId=9 JobState=") + state + " ExitCode=0:0 RunTime=00:00:05");
    REQUIRE(e);
    CHECK(e->killed);
  }
  // Not ended yet, or not a record at all.
  CHECK_FALSE(parse_scontrol_end("JobId=9 JobState=RUNNING ExitCode=0:0"));
  CHECK_FALSE(parse_scontrol_end("JobId=9 JobState=PENDING ExitCode=0:0"));
  CHECK_FALSE(parse_scontrol_end("slurm_load_jobs error: Invalid job id specified"));
  CHECK_FALSE(parse_slurm_duration("INVALID"));
  CHECK_FALSE(parse_slurm_duration("12"));
}

TEST_CASE("slurm status: numbers past an int, or no numbers, never throw") {
  // squeue: a task id past INT_MAX is no task of a sweep (they count from 0); the line is skipped.
  const auto tasks = parse_squeue_tasks("99999999999999999999|RUNNING|n1\n2147483648|PENDING|\n7|RUNNING|n2\n");
  REQUIRE(tasks.size() == 1);
  CHECK(tasks[0].task == 7);
  // scontrol: an ExitCode that is no pair of small numbers says nothing; the state decides.
  const auto failed = parse_scontrol_end("JobId=9 JobState=FAILED ExitCode=99999999999999999999:0 RunTime=00:01");
  REQUIRE(failed);
  CHECK(failed->exit_code == 1);
  const auto done = parse_scontrol_end("JobId=9 JobState=COMPLETED ExitCode=0:99999999999 RunTime=00:01");
  REQUIRE(done);
  CHECK(done->exit_code == 0);
  const auto none = parse_scontrol_end("JobId=9 JobState=FAILED RunTime=00:01");
  REQUIRE(none);
  CHECK(none->exit_code == 1);
  // RunTime with 400 digits: not a duration (std::stod would have thrown out_of_range).
  CHECK_FALSE(parse_slurm_duration(std::string(400, '9') + ":00"));
  CHECK_FALSE(parse_slurm_duration(std::string(400, '9') + "-00:00:00"));
  CHECK(parse_slurm_duration("2-00:00:01") == 2 * 86400.0 + 1);
  CHECK(scontrol_has_state("JobId=9 JobState=RUNNING"));
  CHECK_FALSE(scontrol_has_state("JobId=9 Reason=None"));
}

TEST_CASE("slurm launcher: a task scontrol keeps answering for without a JobState ends as interrupted, not polled forever") {
  test::TempDir dir("slurm_no_state");
  // Stand-ins for the cluster's commands: the task has left squeue, scontrol prints no JobState.
  const std::string bin = (dir.path / "bin").string();
  std::filesystem::create_directories(bin);
  dir.write("bin/squeue", "#!/bin/sh\nexit 0\n");
  dir.write("bin/scontrol", "#!/bin/sh\necho 'JobId=41 ArrayJobId=41 Reason=None'\n");
  std::filesystem::permissions(bin + "/squeue", std::filesystem::perms::owner_all);
  std::filesystem::permissions(bin + "/scontrol", std::filesystem::perms::owner_all);
  const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
  ::setenv("PATH", (bin + ":" + path).c_str(), 1);
  SlurmOptions o;
  o.job_name = "no_state";
  o.folder = dir.path;
  o.poll_s = 0;
  SlurmLauncher launcher(o);
  REQUIRE(launcher.adopt(5, std::string("41"), 0));
  std::vector<PointEvent> events;
  for (int look = 0; look < 10 && events.empty(); ++look) events = launcher.poll();
  ::setenv("PATH", path.c_str(), 1);
  REQUIRE(events.size() == 1);
  CHECK(events[0].kind == PointEvent::Kind::Ended);
  CHECK(events[0].point == 5);
  CHECK(events[0].killed);  // a rerun resumes it from its checkpoint
  CHECK(events[0].how.find("no JobState") != std::string::npos);
  CHECK(launcher.active() == 0);
}

TEST_CASE("slurm launcher: --slurm options split as a shell would, and shell syntax is refused") {
  const auto words = split_sbatch_options("--partition=cpu --time=4:00:00 --comment='two words'");
  REQUIRE(words.size() == 3);
  CHECK(words[2] == "--comment=two words");
  CHECK(split_sbatch_options("").empty());
  CHECK_THROWS_AS(split_sbatch_options("--comment=$(rm -rf x)"), ConfigError);
  CHECK_THROWS_AS(split_sbatch_options("--comment='unbalanced"), ConfigError);
  CHECK_THROWS_AS(split_sbatch_options("-p cpu; rm x"), ConfigError);
}

TEST_CASE("slurm launcher: the batch script runs the point of its array task, appending to that point's log") {
  test::TempDir dir("slurm_script");
  SlurmOptions o;
  o.job_name = "my sweep";
  o.folder = dir.path / "slurm";
  o.workdir = dir.path;
  o.threads = 3;
  o.ranks = 2;
  o.max_running = 4;
  std::vector<PointLaunch> points(2);
  points[0].argv = {"/bin/echo", "first point"};
  points[0].log = dir.path / "a" / "train.log";
  points[1].argv = {"/bin/sh", "-c", "echo \"second $0\"; exit 3", "it's"};
  points[1].log = dir.path / "b c" / "train.log";
  const std::string script = slurm_batch_script(o, points);
  CHECK(script.find("#SBATCH --array=0-1%4\n") != std::string::npos);
  CHECK(script.find("#SBATCH --ntasks=2\n") != std::string::npos);
  CHECK(script.find("#SBATCH --cpus-per-task=3\n") != std::string::npos);
  CHECK(script.find("#SBATCH --job-name=\"my sweep\"\n") != std::string::npos);
  CHECK(script.find("#SBATCH --output=" + (o.folder / "%A_%a.out").string()) != std::string::npos);
  const std::string path = dir.write("array.sh", script);
  // As Slurm runs task 1: the second command, its output appended to its log, its exit code kept.
  const std::string env = "SLURM_ARRAY_JOB_ID=77 SLURM_ARRAY_TASK_ID=";
  CHECK(WEXITSTATUS(std::system((env + "1 bash '" + path + "'").c_str())) == 3);
  const std::string log_b = read_file(points[1].log.string());
  CHECK(log_b.find("Slurm job 77_1 on ") != std::string::npos);
  CHECK(log_b.find("second it's\n") != std::string::npos);
  CHECK(WEXITSTATUS(std::system((env + "0 bash '" + path + "'").c_str())) == 0);
  CHECK(read_file(points[0].log.string()).find("first point\n") != std::string::npos);
  // A task id without a point, and a run outside Slurm, fail with a message.
  CHECK(WEXITSTATUS(std::system((env + "5 bash '" + path + "' 2> /dev/null").c_str())) == 2);
  CHECK(WEXITSTATUS(std::system(("bash '" + path + "' 2> /dev/null").c_str())) != 0);
}

TEST_CASE("slurm launcher: a data-parallel point's ranks are started by srun with PMIx") {
  SlurmOptions o;
  o.ranks = 2;
  const SlurmLauncher launcher(o);
  const auto argv = launcher.command({"/usr/bin/transnormer", "train", "x.yaml"});
  REQUIRE(argv.size() == 5);
  CHECK(argv[0] == "srun");
  CHECK(argv[1] == "--mpi=pmix");
  CHECK(argv[2] == "/usr/bin/transnormer");
  o.ranks = 1;
  CHECK(SlurmLauncher(o).command({"t", "train"}).size() == 2);
}

TEST_CASE("slurm launcher: --slurm words are taken as written: no glob, ~ or variable expansion") {
  // wordexp expanded `*` into the file names of the working directory, onto sbatch's command line.
  test::TempDir dir("slurm_glob");
  dir.write("secret.txt", "x");
  const std::string cwd = std::filesystem::current_path().string();
  std::filesystem::current_path(dir.path);
  const auto words = split_sbatch_options("--comment=x * ?ecret.txt [s]* ~ --x=\"a \\\"b\\\" \\\\\" 'it'\\''s'");
  std::filesystem::current_path(cwd);
  CHECK(words == std::vector<std::string>{"--comment=x", "*", "?ecret.txt", "[s]*", "~", "--x=a \"b\" \\", "it's"});
  for (const char* hostile : {"--comment=$HOME", "--comment=\"$HOME\"", "--comment=`id`", "--comment=\"`id`\"",
                              "-p cpu && id", "-p cpu > out", "--comment=(x)", "--x=\"open", "--x=end\\"})
    CHECK_THROWS_AS(split_sbatch_options(hostile), ConfigError);
}

TEST_CASE("slurm launcher: the batch script of hostile names, byte for byte") {
  SlurmOptions o;
  o.job_name = "it's $(x)";
  o.workdir = "/w/a b `id` *";
  o.folder = "/w/a b `id` */out/slurm";
  std::vector<PointLaunch> points(1);
  points[0].argv = {"transnormer", "train", "s.yaml", "--set", "name=$(touch pwned)", "--out", "o/new\nline"};
  points[0].log = "/w/a b `id` */o/new\nline/train.log";
  const std::string expected =
      "#!/bin/bash\n"
      "# transnormer sweep it's $(x): 1 point(s) as one Slurm job array; task i runs the i-th command below, "
      "appending to its train.log.\n"
      "# Written by `transnormer sweep --launcher slurm`, which submits it and follows its tasks (by hand:\n"
      "# `sbatch FILE`, from any folder: the tasks run in --chdir).\n"
      "#SBATCH --job-name=\"it's $(x)\"\n"
      "#SBATCH --array=0-0\n"
      "#SBATCH --ntasks=1\n"
      "#SBATCH --cpus-per-task=1\n"
      "#SBATCH --chdir=\"/w/a b `id` *\"\n"
      "#SBATCH --output=\"/w/a b `id` */out/slurm/%A_%a.out\"\n"
      "set -u\n"
      "case \"${SLURM_ARRAY_TASK_ID:?submit this script with sbatch}\" in\n"
      "  0)\n"
      "    mkdir -p '/w/a b `id` */o/new\nline'\n"
      "    printf '# transnormer sweep %s: Slurm job %s_%s on %s: %s\\n' 'it'\\''s $(x)' \"$SLURM_ARRAY_JOB_ID\" "
      "\"$SLURM_ARRAY_TASK_ID\" \"$(hostname)\" 'transnormer train s.yaml --set '\\''name=$(touch pwned)'\\'' --out "
      "'\\''o/new\nline'\\''' >> '/w/a b `id` */o/new\nline/train.log'\n"
      "    exec transnormer train s.yaml --set 'name=$(touch pwned)' --out 'o/new\nline' >> '/w/a b `id` */o/new\n"
      "line/train.log' 2>&1 ;;\n"
      "esac\n"
      "echo \"transnormer sweep: no point for array task $SLURM_ARRAY_TASK_ID\" >&2\n"
      "exit 2\n";
  CHECK(slurm_batch_script(o, points) == expected);
  // The user's --slurm options go into the script too (a script submitted by hand asks for the
  // same partition and time): an option with its value on one line, after the sweep's own.
  o.sbatch_args = split_sbatch_options("--partition=cpu -t 0:10:00 --comment 'a b'");
  const std::string with_options = slurm_batch_script(o, points);
  CHECK(with_options.find("/out/slurm/%A_%a.out\"\n#SBATCH --partition=cpu\n#SBATCH -t 0:10:00\n#SBATCH --comment "
                          "\"a b\"\nset -u\n") != std::string::npos);

  // What no #SBATCH line can carry is refused, naming it: a newline would end the line and run the
  // rest as a command; % and \ in --output are Slurm's file name patterns.
  for (const auto& entry : std::vector<std::pair<std::string, std::string>>{
           {"workdir", "/w/x\ntouch /tmp/pwned"}, {"job", "s\nid"}, {"job", "say \"hi\""},
           {"folder", "/w/100%/slurm"}, {"folder", "/w/a\\b/slurm"}, {"workdir", std::string("/w/\r")}}) {
    const std::string& field = entry.first;  // no structured binding: CAPTURE is a lambda (clang 14)
    const std::string& value = entry.second;
    CAPTURE(value);
    SlurmOptions bad = o;
    if (field == "workdir") bad.workdir = value;
    if (field == "job") bad.job_name = value;
    if (field == "folder") bad.folder = value;
    CHECK_THROWS_AS(slurm_batch_script(bad, points), ConfigError);
  }
  std::vector<PointLaunch> nul = points;
  nul[0].argv.push_back(std::string("a\0b", 3));
  CHECK_THROWS_AS(slurm_batch_script(o, nul), ConfigError);
}

TEST_CASE("slurm launcher: a task of the script gets its hostile words and paths intact, and runs nothing else") {
  test::TempDir dir("slurm_hostile");
  const std::string folder = (dir.path / "we $(touch pwned1) `touch pwned2` 'q' *").string();  // no \": refused
  std::filesystem::create_directories(folder);
  SlurmOptions o;
  o.job_name = "$(touch pwned3)";
  o.workdir = folder;
  o.folder = std::filesystem::path(folder) / "slurm";
  const std::vector<std::string> words = {"new\nline", "'q'", "\"dq\"", "$(touch pwned4)", "`touch pwned5`", "*",
                                          "a b", "$HOME", "\\", "", "-n"};
  std::vector<PointLaunch> points(1);
  const std::string out = folder + "/args.txt";
  points[0].argv = {"/bin/sh", "-c", "out=$1; shift; printf '%s|' \"$@\" > \"$out\"", "sh", out};
  points[0].argv.insert(points[0].argv.end(), words.begin(), words.end());
  points[0].log = std::filesystem::path(folder) / "point $(touch pwned6)" / "train.log";
  const std::string script = dir.write("array.sh", slurm_batch_script(o, points));
  const std::string run = "cd '" + dir.path.string() + "' && SLURM_ARRAY_JOB_ID=1 SLURM_ARRAY_TASK_ID=0 bash array.sh";
  REQUIRE(WEXITSTATUS(std::system(run.c_str())) == 0);
  std::string expected;
  for (const std::string& w : words) expected += w + "|";
  CHECK(read_file(out) == expected);
  CHECK(read_file(points[0].log.string()).find("$(touch pwned3)") != std::string::npos);  // the header, as text
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.path))
    CHECK_MESSAGE(entry.path().filename().string().rfind("pwned", 0) != 0, entry.path().string());
}
