// Atomic writes and whole-file reads: a failed write is an IoError (a runtime failure, exit 1),
// a missing file to read is a DataError (bad input, exit 2).
#include <doctest/doctest.h>

#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <map>
#include <string>

#include "core/error.h"
#include "core/io/atomic_file.h"
#include "core/io/safetensors.h"
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

TEST_CASE("write_file_atomic: no such directory, or a directory in the way, is an IoError") {
  TempDir dir("atomic_paths");
  const std::string missing = dir.file("no/such/dir/summary.json");
  auto err = error_of([&] { write_file_atomic(missing, "{}"); });
  CHECK(err.first == "io");
  CHECK(err.second.find(missing) != std::string::npos);

  const std::string occupied = dir.file("occupied");  // rename cannot replace a non-empty directory
  std::filesystem::create_directories(occupied + "/child");
  err = error_of([&] { write_file_atomic(occupied, "{}"); });
  CHECK(err.first == "io");
  CHECK(err.second.find(occupied) != std::string::npos);
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
