#pragma once
// Runs the built `transnormer` binary in a child process and captures exit code, stdout, stderr.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/test_paths.h"

namespace tn::test {

struct CliResult {
  int code = -1;
  std::string out, err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Runs the shell command line `command` (with its environment assignments) with stdout and
/// stderr in the files `out` and `err` and no stdin; its exit code (128 + signal when a signal
/// ended it) and output.
inline CliResult run_command_line(const std::string& command, const std::string& out, const std::string& err) {
  const std::string cmd = command + " > '" + out + "' 2> '" + err + "' < /dev/null";
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

/// Starts the shell command line `command` in the background (exec'd, so its pid is the
/// command's), with stdout and stderr in `out` and `err` and no stdin; its pid.
inline pid_t spawn_command_line(const std::string& command, const std::string& out, const std::string& err) {
  const std::string cmd = "exec " + command + " > '" + out + "' 2> '" + err + "' < /dev/null";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

/// Runs `transnormer <args>` (args already shell-quoted) with TRANSNORMER_DATA set to the tests'
/// data root and 2 threads.
inline CliResult run_cli(const std::string& args, const std::string& scratch) {
  std::filesystem::create_directories(scratch);
  return run_command_line("TRANSNORMER_DATA='" + data_root() + "' OMP_NUM_THREADS=2 '" + binary() + "' " + args,
                          scratch + "/stdout.txt", scratch + "/stderr.txt");
}

/// A `transnormer <args>` started in the background (run_cli's environment and redirections).
struct CliChild {
  pid_t pid = -1;
  std::string out, err;  // files of its stdout and stderr
};

inline CliChild spawn_cli(const std::string& args, const std::string& scratch, const std::string& tag = "child") {
  std::filesystem::create_directories(scratch);
  CliChild c;
  c.out = scratch + "/" + tag + ".stdout.txt";
  c.err = scratch + "/" + tag + ".stderr.txt";
  c.pid = spawn_command_line("env TRANSNORMER_DATA='" + data_root() + "' OMP_NUM_THREADS=2 '" + binary() + "' " + args,
                             c.out, c.err);
  return c;
}

/// Waits for a spawned child; its exit code (128 + signal when a signal ended it) and output.
inline CliResult wait_cli(const CliChild& c) {
  int status = 0;
  ::waitpid(c.pid, &status, 0);
  CliResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(c.out);
  r.err = slurp(c.err);
  return r;
}

/// A fresh folder for one test: per process, so test runs from two checkouts at once do not share it.
inline std::string scratch_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("transnormer_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

inline void write_text(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

}  // namespace tn::test
