// Whole-file reads are bounded (hostile-input campaign, class 2): a file over its kind's limit is
// refused before anything is read or allocated, a pipe once that much has arrived, and a file with
// no limit of its own is bounded by half the memory this process may use.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "core/platform/system.h"
#include "tests/temp_dir.h"

using namespace tn;

TEST_CASE("read limits: a regular file over its limit is refused before it is read, naming it and the limit") {
  tn::test::TempDir dir("read_limits");
  const std::string path = dir.write("big.txt", std::string(5000, 'x'));
  CHECK(read_file(path, 5000, "a test file").size() == 5000);
  try {
    (void)read_file(path, 4999, "a test file");
    FAIL("a 5000-byte file was read under a 4999-byte limit");
  } catch (const DataError& e) {
    const std::string message = e.what();
    CHECK(message.find(path) != std::string::npos);
    CHECK(message.find("it holds 5000 bytes, over the limit of 4999 bytes for a test file") != std::string::npos);
  }
  // A sparse file of 1 GiB: refused by its size alone, in no time and no memory.
  const std::string sparse = dir.file("sparse.bin");
  { std::ofstream(sparse) << ""; }
  std::filesystem::resize_file(sparse, uint64_t{1} << 30);
  CHECK_THROWS_WITH_AS(read_file(sparse, 1 << 20, "a test file"), doctest::Contains("1073741824 bytes"), DataError);
}

TEST_CASE("read limits: a pipe is cut off once more than the limit has arrived") {
  tn::test::TempDir dir("read_limits_fifo");
  const std::string fifo = dir.file("pipe");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto previous = std::signal(SIGPIPE, SIG_IGN);  // the writer outlives the reader's interest
  std::thread writer([&] {
    std::ofstream out(fifo, std::ios::binary);
    const std::string chunk(1 << 16, 'y');
    for (int i = 0; i < 64 && out; ++i) out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
  });
  CHECK_THROWS_WITH_AS(read_file(fifo, 1 << 20, "a test file"), doctest::Contains("more than 1048576 bytes"), DataError);
  writer.join();
  std::signal(SIGPIPE, previous);
}

TEST_CASE("read limits: a FIFO is read once its writer comes, and one that no writer opens is refused, not waited on for good") {
  tn::test::TempDir dir("read_fifo_writer");
  const std::string fifo = dir.file("spec.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // The writer comes 1.5 s after the reader opened it: the reader waits, then reads it all.
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    std::ofstream(fifo) << "model: {d_model: 8}\n";
  });
  CHECK(read_file(fifo, 1 << 20, "a test file") == "model: {d_model: 8}\n");
  late.join();
  // No writer at all: refused after the wait (10 s), naming the FIFO and the fix.
  const auto start = std::chrono::steady_clock::now();
  const std::string refused = fifo + ": a FIFO that nothing wrote into within 10 s; start its writer first";
  CHECK_THROWS_WITH_AS(read_file(fifo, 1 << 20, "a test file"), doctest::Contains(refused.c_str()), DataError);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(waited >= 9.5);
  CHECK(waited < 30);
}

TEST_CASE("read limits: a file with no limit of its own is bounded by half the memory this process may use") {
  const double memory = memory_limit().bytes;
  if (memory > 0) CHECK(static_cast<double>(default_read_limit()) == doctest::Approx(memory / 2).epsilon(1e-6));
  tn::test::TempDir dir("read_limits_default");
  CHECK(read_file(dir.write("small.txt", "abc")) == "abc");
}
