// One writer per folder (core/platform/io/dir_lock.h): a second claim is refused naming the holder's pid,
// and a claim ends with its process, however that ends.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <string>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "core/platform/io/dir_lock.h"
#include "tests/temp_dir.h"

using namespace tn;
using tn::test::TempDir;

namespace {

/// The message of the ConfigError that claiming `dir` throws, or "" when the claim succeeds.
std::string refusal(const std::string& dir) {
  try {
    DirLock lock = DirLock::acquire(dir, "run folder");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("DirLock: a held folder is refused with the holder's pid, free again once released") {
  TempDir root("dir_lock");
  const std::string dir = root.file("run/nested");  // created by the claim
  {
    const DirLock held = DirLock::acquire(dir, "run folder");
    CHECK(held.held());
    const std::string message = refusal(dir);
    CHECK(message.find(dir) != std::string::npos);
    CHECK(message.find("in use") != std::string::npos);
    CHECK(message.find("(pid " + std::to_string(::getpid()) + ")") != std::string::npos);
  }
  CHECK(refusal(dir).empty());
}

TEST_CASE("DirLock: a claim held by another process ends when that process is killed") {
  TempDir root("dir_lock_kill");
  const std::string dir = root.file("sweep");
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const DirLock lock = DirLock::acquire(dir, "sweep folder");
    [[maybe_unused]] ssize_t w = ::write(ready[1], "1", 1);
    for (;;) ::pause();  // until killed
  }
  char c = 0;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  CHECK(refusal(dir).find("(pid " + std::to_string(child) + ")") != std::string::npos);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  CHECK(refusal(dir).empty());  // no stale claim to clean up
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST_CASE("DirLock: a file, a file above the folder, or a dangling link is refused as bad input") {
  TempDir root("dir_lock_file");
  const std::string file = root.write("afile", "x\n");
  std::string message = refusal(file);
  CHECK(message.find(file + " is a file, not a folder") != std::string::npos);
  message = refusal(file + "/run/x");  // a folder below a file cannot be made either
  CHECK(message.find(file + " is a file, not a folder") != std::string::npos);
  CHECK(refusal("/dev/null/run").find("/dev/null is a character device, not a folder") != std::string::npos);
  const std::string link = root.file("dangling");
  REQUIRE(::symlink(root.file("nowhere").c_str(), link.c_str()) == 0);
  message = refusal(link);
  CHECK(message.find("symbolic link to " + root.file("nowhere") + ", which does not exist") != std::string::npos);
  CHECK_THROWS_AS(DirLock::check_free(link, "run folder"), ConfigError);
  CHECK_THROWS_AS(check_folder_path(file, "report folder"), ConfigError);
  CHECK(read_file(file) == "x\n");  // nothing written over the file
  CHECK(refusal(root.file("new/run")).empty());  // missing folders are made
  CHECK(refusal(root.file("new/run/../other")).empty());
}

TEST_CASE("DirLock: a path no folder can be made at is refused before anything is written: long names, loops, proc, read-only") {
  TempDir root("dir_lock_unmakeable");
  const std::string long_name(300, 'a');
  std::string message = refusal(root.file(long_name + "/run"));
  CHECK(message.find("a name in it has 300 bytes, over the 255") != std::string::npos);
  CHECK(refusal(root.file(std::string(255, 'b'))).empty());  // 255 bytes: a file name may have that many
  CHECK_THROWS_AS(check_folder_path(std::string(5000, 'c'), "run folder"), ConfigError);  // past PATH_MAX
  const std::string a = root.file("loop_a"), b = root.file("loop_b");
  REQUIRE(::symlink(b.c_str(), a.c_str()) == 0);
  REQUIRE(::symlink(a.c_str(), b.c_str()) == 0);
  CHECK(refusal(a + "/run").find("a loop of links") != std::string::npos);
  // mkdir in /proc fails with ENOENT even for root, in /sys with EPERM: refused up front, exit 2.
  CHECK(refusal("/proc/transnormer_run").find("virtual file system") != std::string::npos);
  CHECK_THROWS_AS(check_folder_path("/sys/transnormer_run/x", "run folder"), ConfigError);
  if (::geteuid() != 0) {  // root may write a folder of mode 555
    const std::string locked = root.file("locked");
    std::filesystem::create_directories(locked);
    ::chmod(locked.c_str(), 0555);
    CHECK(refusal(locked + "/run").find("a folder you may not write") != std::string::npos);
    ::chmod(locked.c_str(), 0755);
  }
  for (const auto& entry : std::filesystem::directory_iterator(root.path))  // nothing of the refused paths
    CHECK_MESSAGE(entry.path().filename().string()[0] != 'a', entry.path().string());
  CHECK_FALSE(std::filesystem::exists("/proc/transnormer_run"));
}

namespace {

/// Runs `claim` in a child process; its exit code (0: returned, 2: ConfigError, 1: another error),
/// or -1 when it was still running after `seconds` (then killed): a claim that blocks.
template <class Claim>
int in_child(Claim&& claim, int seconds = 5) {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    try {
      claim();
    } catch (const ConfigError&) {
      ::_exit(2);
    } catch (...) {
      ::_exit(1);
    }
    ::_exit(0);
  }
  for (int waited = 0; waited < seconds * 100; ++waited) {
    int status = 0;
    if (::waitpid(child, &status, WNOHANG) == child) return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
    ::usleep(10000);
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  return -1;
}

}  // namespace

TEST_CASE("DirLock: a .lock that is a symbolic link or a FIFO is refused, its target untouched and nothing blocked") {
  TempDir root("dir_lock_link");
  const std::string victim = root.write("victim.txt", "the user's file\n");
  const std::string linked = root.file("linked");
  std::filesystem::create_directories(linked);
  REQUIRE(::symlink(victim.c_str(), (linked + "/.lock").c_str()) == 0);
  const std::string message = refusal(linked);
  CHECK(message.find(linked + "/.lock is a symbolic link") != std::string::npos);
  CHECK_THROWS_AS(DirLock::check_free(linked, "run folder"), ConfigError);
  CHECK(read_file(victim) == "the user's file\n");  // no pid written into the link's target
  const std::string dangling = root.file("dangling");  // a link to nothing would be created
  std::filesystem::create_directories(dangling);
  REQUIRE(::symlink(root.file("made-by-lock").c_str(), (dangling + "/.lock").c_str()) == 0);
  CHECK(refusal(dangling).find("is a symbolic link") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(root.file("made-by-lock")));

  // A FIFO: the open of check_free blocked until a writer came, past any SIGTERM.
  const std::string piped = root.file("piped");
  std::filesystem::create_directories(piped);
  REQUIRE(::mkfifo((piped + "/.lock").c_str(), 0600) == 0);
  CHECK(in_child([&] { DirLock::check_free(piped, "run folder"); }) == 2);
  CHECK(in_child([&] { DirLock lock = DirLock::acquire(piped, "run folder"); }) == 2);
  CHECK(std::filesystem::is_fifo(piped + "/.lock"));  // left as it was
}
