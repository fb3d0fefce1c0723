// The scripts that write, rename or delete never destroy what is not theirs: scripts/report_timing.sh
// deletes its FOLDER only when it made it (a user's folder, a link or /dev/null given as FOLDER was
// removed with rm -rf), and scripts/keep_run_records.sh refuses a DEST holding a link, FIFO or
// device (cp -p wrote through a link and gave its target the copy's owner and mode).
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "tests/app/cli_runner.h"

using namespace tn::test;
namespace fs = std::filesystem;

TEST_CASE("scripts/report_timing.sh deletes only a FOLDER it made") {
  const std::string dir = scratch_dir("report_timing_folder");
  const std::string script = "bash '" + source_dir() + "/scripts/report_timing.sh' /bin/false ";
  write_text(dir + "/mine/thesis.tex", "years of work\n");
  fs::create_directory_symlink(dir + "/mine", dir + "/link");
  write_text(dir + "/file", "a file\n");
  for (const std::string folder : {dir + "/mine", dir + "/link", dir + "/file"}) {
    CAPTURE(folder);
    const CliResult r = run_command_line(script + "'" + folder + "'", dir + "/out.txt", dir + "/err.txt");
    CHECK(r.code == 2);
    CHECK(r.err.find("is not a folder this script made") != std::string::npos);
  }
  CHECK(slurp(dir + "/mine/thesis.tex") == "years of work\n");
  CHECK(fs::is_symlink(dir + "/link"));
  CHECK(slurp(dir + "/file") == "a file\n");
  // Its own folder (made by an earlier run) is replaced: here the training (/bin/false) then fails.
  write_text(dir + "/own/.report_timing", "");
  write_text(dir + "/own/stale.txt", "old\n");
  const CliResult own = run_command_line(script + "'" + dir + "/own'", dir + "/out.txt", dir + "/err.txt");
  CHECK(own.code != 2);
  CHECK_FALSE(fs::exists(dir + "/own/stale.txt"));
  CHECK(fs::exists(dir + "/own/.report_timing"));
}

TEST_CASE("scripts/keep_run_records.sh refuses a DEST holding a link or FIFO, and writes nothing through it") {
  const std::string dir = scratch_dir("keep_records_links");
  const std::string src = dir + "/sweep", dest = dir + "/kept";
  write_text(src + "/sweep.json", "{\"points\": []}\n");
  write_text(src + "/a/config.yaml", "model: {}\n");
  write_text(dir + "/victim.yaml", "the user's\n");
  ::chmod((dir + "/victim.yaml").c_str(), 0600);
  fs::create_directories(dest + "/a");
  fs::create_symlink(dir + "/victim.yaml", dest + "/a/config.yaml");
  const std::string script = "bash '" + source_dir() + "/scripts/keep_run_records.sh' '" + src + "' '" + dest + "'";
  CliResult r = run_command_line(script, dir + "/out.txt", dir + "/err.txt");
  CHECK(r.code == 2);
  CHECK(r.err.find(dest + "/a/config.yaml") != std::string::npos);
  CHECK(slurp(dir + "/victim.yaml") == "the user's\n");
  struct stat st {};
  REQUIRE(::stat((dir + "/victim.yaml").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);  // cp -p would have given it the copy's mode
  fs::remove(dest + "/a/config.yaml");
  REQUIRE(::mkfifo((dest + "/a/config.yaml").c_str(), 0600) == 0);  // cp would block on it
  r = run_command_line("timeout 20 " + script, dir + "/out.txt", dir + "/err.txt");
  CHECK(r.code == 2);
  fs::remove(dest + "/a/config.yaml");
  r = run_command_line(script, dir + "/out.txt", dir + "/err.txt");  // only regular files: kept
  CHECK(r.code == 0);
  CHECK(slurp(dest + "/a/config.yaml") == "model: {}\n");
}
