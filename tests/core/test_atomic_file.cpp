// Atomic writes and whole-file reads: a failed write is an IoError (a runtime failure, exit 1),
// a missing file to read is a DataError (bad input, exit 2).
#include <doctest/doctest.h>

#include <sys/resource.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <map>
#include <string>
#include <thread>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "core/platform/io/safetensors.h"
#include "tests/temp_dir.h"

using namespace tn;
using tn::test::TempDir;

namespace {

/// Which of the two error types `write` threw ("io", "data", "none" or "other"), and its message.
template <class Write>
std::pair<std::string, std::string> error_of(Write&& write) {
  try {
    write();
  } catch (const DataError& e) {
    return {"data", e.what()};
  } catch (const IoError& e) {
    return {"io", e.what()};
  } catch (const std::exception& e) {
    return {"other", e.what()};
  }
  return {"none", ""};
}

/// While alive, files this process writes may not grow past `bytes` (RLIMIT_FSIZE): a write
/// beyond fails with EFBIG, as on a full disk (SIGXFSZ is ignored meanwhile, so it fails instead
/// of killing the process).
struct FileSizeLimit {
  rlimit saved{};
  void (*saved_handler)(int);
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved);
    saved_handler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = saved;
    limit.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved);
    std::signal(SIGXFSZ, saved_handler);
  }
};

}  // namespace

TEST_CASE("write_file_atomic: a full disk is an IoError naming the file, and leaves nothing behind") {
  TempDir dir("atomic_full");
  const std::string path = dir.file("metrics.jsonl");
  std::pair<std::string, std::string> err;
  {
    FileSizeLimit limit(4096);
    err = error_of([&] { write_file_atomic(path, std::string(1 << 20, 'x')); });
  }
  CHECK(err.first == "io");
  CHECK(err.second.find(path) != std::string::npos);
  CHECK(err.second.find("disk full") != std::string::npos);
  CHECK(std::filesystem::is_empty(dir.path));  // neither the file nor its temporary

  write_file_atomic(path, "ok\n");  // the limit is gone: the same write works
  CHECK(read_file(path) == "ok\n");
}

TEST_CASE("write_file_atomic: no such directory is an IoError, a directory in the way bad input (DataError)") {
  TempDir dir("atomic_paths");
  const std::string missing = dir.file("no/such/dir/summary.json");
  auto err = error_of([&] { write_file_atomic(missing, "{}"); });
  CHECK(err.first == "io");
  CHECK(err.second.find(missing) != std::string::npos);

  const std::string occupied = dir.file("occupied");  // rename cannot replace a non-empty directory
  std::filesystem::create_directories(occupied + "/child");
  err = error_of([&] { write_file_atomic(occupied, "{}"); });
  CHECK(err.first == "data");  // the path given names a folder: exit 2, with the fix
  CHECK(err.second.find(occupied + ": it is a directory; give the path of a file") != std::string::npos);
  CHECK(std::filesystem::is_directory(occupied + "/child"));
}

TEST_CASE("save_safetensors: a failed write is an IoError, and reading a missing file stays DataError") {
  TempDir dir("atomic_st");
  const std::string path = dir.file("gone/checkpoint.safetensors");
  const std::map<std::string, Tensor> tensors = {{"w", Tensor::zeros({2, 3})}};
  auto err = error_of([&] { save_safetensors(path, tensors, {}); });
  CHECK(err.first == "io");
  CHECK(err.second.find(path) != std::string::npos);

  err = error_of([&] { load_safetensors(path); });
  CHECK(err.first == "data");
  err = error_of([&] { read_file(dir.file("absent.txt")); });
  CHECK(err.first == "data");
  CHECK(err.second.find("absent.txt") != std::string::npos);
}

TEST_CASE("read_file: a device that never ends and a directory are refused, naming the path") {
  // /dev/zero would be read until memory runs out: a data path pointed at it hung train --dry-run.
  auto err = error_of([&] { read_file("/dev/zero"); });
  CHECK(err.first == "data");
  CHECK(err.second.find("/dev/zero") != std::string::npos);
  CHECK(err.second.find("a device, not a file") != std::string::npos);
  TempDir dir("read_dir");
  err = error_of([&] { read_file(dir.path.string()); });
  CHECK(err.first == "data");
  CHECK(err.second.find("a directory") != std::string::npos);
  // An empty device that ends (/dev/null) is refused too: it is no file either.
  CHECK(error_of([&] { read_file("/dev/null"); }).first == "data");
}

TEST_CASE("write_file_atomic: a symlink is written through, the link kept") {
  TempDir dir("atomic_link");
  const std::string target = dir.write("real.json", "old");
  const std::string link = dir.file("link.json");
  std::filesystem::create_symlink("real.json", link);  // relative, as users make them
  write_file_atomic(link, "new");
  CHECK(std::filesystem::is_symlink(link));
  CHECK(std::filesystem::read_symlink(link) == "real.json");
  CHECK(read_file(target) == "new");

  const std::string dangling = dir.file("dangling.json");  // its target does not exist yet
  std::filesystem::create_symlink("made.json", dangling);
  write_file_atomic(dangling, "made");
  CHECK(std::filesystem::is_symlink(dangling));
  CHECK(read_file(dir.file("made.json")) == "made");

  const std::string loop = dir.file("loop");
  std::filesystem::create_symlink("loop", loop);
  CHECK(error_of([&] { write_file_atomic(loop, "x"); }).first == "io");
}

TEST_CASE("write_file_atomic: a FIFO is written into, not replaced by a file") {
  TempDir dir("atomic_fifo");
  const std::string fifo = dir.file("pipe");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string received;
  std::thread reader([&] { received = read_file(fifo); });  // blocks until the writer opens it
  write_file_atomic(fifo, "through the pipe");
  reader.join();
  CHECK(received == "through the pipe");
  struct stat st {};
  REQUIRE(::lstat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  CHECK(std::distance(std::filesystem::directory_iterator(dir.path), {}) == 1);  // no temporary
}

TEST_CASE("write_file_atomic: /proc/self/fd/N of an anonymous pipe (what /dev/stdout is in a pipeline) is written into") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  std::string received;
  std::thread reader([&] {
    char buf[64];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) received.append(buf, static_cast<size_t>(n));
  });
  // The link's target reads "pipe:[inode]", which is no path: it must be opened through the link.
  CHECK_NOTHROW(write_file_atomic("/proc/self/fd/" + std::to_string(fds[1]), "into the pipe"));
  ::close(fds[1]);
  reader.join();
  ::close(fds[0]);
  CHECK(received == "into the pipe");
}

TEST_CASE("write_file_atomic: a process killed while writing leaves the old file or the new, and the next write no temporary") {
  TempDir dir("atomic_kill");
  const std::string path = dir.file("big.bin");
  const std::string old_bytes(1 << 20, 'a'), new_bytes(8 << 20, 'b');
  write_file_atomic(path, old_bytes);
  for (int round = 0; round < 8; ++round) {
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      for (;;) write_file_atomic(path, new_bytes);  // until killed
    }
    ::usleep(static_cast<useconds_t>(2000 + 3000 * round));
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    const std::string now = read_file(path);
    CHECK((now == old_bytes || now == new_bytes));
  }
  // A child killed between naming its temporary and renaming it (a rare instant, seen under load)
  // leaves the temporary: the next write removes it.
  write_file_atomic(path, old_bytes);
  CHECK(read_file(path) == old_bytes);
  for (const auto& entry : std::filesystem::directory_iterator(dir.path))
    CHECK(entry.path().filename() == "big.bin");
}

TEST_CASE("write_file_atomic: the temporaries of dead writers of this machine are removed, a running writer's, another machine's, a folder and a link kept") {
  TempDir dir("atomic_stale");
  const std::string path = dir.file("m.json");
  char host[256] = {};
  REQUIRE(::gethostname(host, sizeof host - 1) == 0);
  const pid_t dead = ::fork();  // a pid that ran and no longer does
  REQUIRE(dead >= 0);
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  const std::string prefix = path + ".tmp." + host + ".";
  const std::string stale = prefix + std::to_string(dead);
  const std::string running = prefix + std::to_string(::getppid());  // the test's parent runs
  const std::string elsewhere = path + ".tmp.other-machine." + std::to_string(dead);
  const std::string unrelated = path + ".tmp." + host + ".notapid";
  for (const auto& f : {stale, running, elsewhere, unrelated}) write_file_atomic(f, "left");
  const pid_t dead2 = ::fork();  // a folder and a symlink with a dead writer's temporary name
  REQUIRE(dead2 >= 0);
  if (dead2 == 0) ::_exit(0);
  ::waitpid(dead2, nullptr, 0);
  const pid_t dead3 = ::fork();
  REQUIRE(dead3 >= 0);
  if (dead3 == 0) ::_exit(0);
  ::waitpid(dead3, nullptr, 0);
  const std::string folder = prefix + std::to_string(dead2), link = prefix + std::to_string(dead3);
  std::filesystem::create_directory(folder);
  std::filesystem::create_symlink(running, link);
  write_file_atomic(path, "{}");
  CHECK(read_file(path) == "{}");
  CHECK_FALSE(std::filesystem::exists(stale));
  CHECK(std::filesystem::exists(running));
  CHECK(std::filesystem::exists(elsewhere));
  CHECK(std::filesystem::exists(unrelated));
  CHECK(std::filesystem::is_directory(folder));
  CHECK(std::filesystem::is_symlink(link));
}

TEST_CASE("write_own_file: a regular file is replaced, a link, a FIFO, a device or a folder is refused and kept") {
  TempDir dir("own_file");
  const std::string path = dir.file("summary.json");
  write_own_file(path, "one");
  write_own_file(path, "two");  // a regular file: replaced
  CHECK(read_file(path) == "two");

  const std::string victim = dir.write("victim.txt", "the user's");
  const std::string link = dir.file("metrics.jsonl");
  std::filesystem::create_symlink(victim, link);
  std::string message;  // a ConfigError: bad input, exit 2
  try {
    write_own_file(link, "new", "a run");
  } catch (const ConfigError& e) {
    message = e.what();
  }
  CHECK(message.find(link + " is a symbolic link, not a file a run writes") != std::string::npos);
  CHECK(read_file(victim) == "the user's");
  CHECK(std::filesystem::is_symlink(link));

  const std::string fifo = dir.file("config.yaml");  // written into, it would block with no reader
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_AS(write_own_file(fifo, "x"), ConfigError);
  CHECK(std::filesystem::is_fifo(fifo));

  std::filesystem::create_directories(dir.file("folder"));
  CHECK_THROWS_AS(write_own_file(dir.file("folder"), "x"), ConfigError);
  CHECK(std::filesystem::is_directory(dir.file("folder")));

  if (::geteuid() == 0) {  // a null device of our own (never /dev/null itself)
    const std::string device = dir.file("run.json");
    REQUIRE(::mknod(device.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) == 0);
    CHECK_THROWS_AS(write_own_file(device, "x"), ConfigError);
    struct stat st {};
    REQUIRE(::lstat(device.c_str(), &st) == 0);
    CHECK(S_ISCHR(st.st_mode));
  }
}

TEST_CASE("write_file_atomic: a device node is written into and stays a device, never renamed over") {
  if (::geteuid() != 0) return;  // making a device node needs root
  TempDir dir("atomic_device");
  const std::string device = dir.file("null");
  REQUIRE(::mknod(device.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) == 0);
  const std::string link = dir.file("out.json");
  std::filesystem::create_symlink(device, link);
  write_file_atomic(device, "into the device");
  write_file_atomic(link, "through the link");
  struct stat st {};
  REQUIRE(::lstat(device.c_str(), &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  CHECK(std::filesystem::is_symlink(link));
  CHECK(std::distance(std::filesystem::directory_iterator(dir.path), {}) == 2);  // no temporary
}
