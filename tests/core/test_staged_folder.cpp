// A folder replaced whole in one step (core/platform/io/staged_folder.h): the staging folder beside it, the
// exchange, a link to the folder kept, and the leftovers of killed writers cleaned up (an old folder
// moved aside put back when it is the only copy).
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "core/platform/io/staged_folder.h"
#include "tests/temp_dir.h"

using namespace tn;
using tn::test::TempDir;
namespace fs = std::filesystem;

namespace {

/// A pid that ran on this machine and no longer runs.
pid_t dead_pid() {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

std::string host() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

}  // namespace

TEST_CASE("StagedFolder: the new contents replace the old in one step, beside the folder, a link to it kept") {
  TempDir root("staged");
  const std::string set = root.file("set");
  {
    StagedFolder first(set);  // no folder yet: renamed into place
    CHECK(fs::path(first.path()).parent_path() == root.path);
    CHECK(fs::path(first.path()).filename().string().rfind(".set.staging.", 0) == 0);
    write_file_atomic(first.path() + "/a.txt", "one");
    first.commit();
  }
  CHECK(read_file(set + "/a.txt") == "one");
  {
    StagedFolder second(set);
    write_file_atomic(second.path() + "/b.txt", "two");
    CHECK(read_file(set + "/a.txt") == "one");  // untouched until the commit
    second.commit();
  }
  CHECK_FALSE(fs::exists(set + "/a.txt"));  // the old contents went whole
  CHECK(read_file(set + "/b.txt") == "two");
  {
    StagedFolder abandoned(set);  // a failure before the commit: the folder stays as it was
    write_file_atomic(abandoned.path() + "/c.txt", "three");
  }
  CHECK(read_file(set + "/b.txt") == "two");
  CHECK(std::distance(fs::directory_iterator(root.path), {}) == 1);  // no staging folder left

  const std::string link = root.file("link");  // a link to the folder: the folder is replaced, the link kept
  fs::create_directory_symlink("set", link);
  {
    StagedFolder through(link);
    CHECK(through.target() == fs::canonical(set).string());
    write_file_atomic(through.path() + "/d.txt", "four");
    through.commit();
  }
  CHECK(fs::is_symlink(link));
  CHECK(read_file(link + "/d.txt") == "four");
}

TEST_CASE("StagedFolder: a killed writer's leftovers are removed, an old folder moved aside put back when it is the only copy") {
  TempDir root("staged_left");
  const std::string set = root.file("set");
  const std::string staging = root.file(".set.staging." + host() + "." + std::to_string(dead_pid()));
  fs::create_directories(staging + "/imgs");
  const std::string running = root.file(".set.staging." + host() + "." + std::to_string(::getppid()));
  fs::create_directories(running);  // a writer still at work: kept
  const std::string aside = root.file(".set.previous." + host() + "." + std::to_string(dead_pid()));
  fs::create_directories(aside);
  std::ofstream(aside + "/labels.txt") << "the only copy";
  {
    StagedFolder next(set);
    CHECK_FALSE(fs::exists(staging));
    CHECK(fs::exists(running));
    CHECK(read_file(set + "/labels.txt") == "the only copy");  // put back: the folder was missing
  }
  CHECK(read_file(set + "/labels.txt") == "the only copy");
}
