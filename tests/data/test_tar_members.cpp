// Archive members whose header claims more than the file can hold (hostile-input campaign,
// class 2): a 93-byte .tar.gz claiming a 3 GB member took 3.2 GB before libarchive found the data
// missing. A wanted member over its reader's cap is refused before any of it is read, and the
// others are read as the bytes arrive, not allocated at the size their header claims.
#include <doctest/doctest.h>
#include <sys/resource.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "data/readers/cifar10.h"
#include "data/readers/imdb.h"
#include "tests/data_error.h"
#include "tests/temp_dir.h"

using namespace tn;
using tn::test::data_error;

namespace {

/// A ustar header for a regular file `name` whose size field says `size` bytes.
std::string tar_header(const std::string& name, uint64_t size) {
  std::string h(512, '\0');
  h.replace(0, name.size(), name);
  h.replace(100, 7, "0000644");
  h.replace(108, 7, "0000000");
  h.replace(116, 7, "0000000");
  char octal[16];
  std::snprintf(octal, sizeof octal, "%011llo", static_cast<unsigned long long>(size));
  h.replace(124, 11, octal);
  h.replace(136, 11, "00000000000");
  h[156] = '0';
  h.replace(257, 6, std::string("ustar\0", 6));
  h.replace(263, 2, "00");
  h.replace(148, 8, "        ");
  unsigned sum = 0;
  for (unsigned char c : h) sum += c;
  std::snprintf(octal, sizeof octal, "%06o", sum);
  h.replace(148, 6, octal);
  h[154] = '\0';
  h[155] = ' ';
  return h;
}

/// `name` claiming `claimed` bytes of which `real` follow, gzip-compressed into `path`.
void write_claiming_archive(const tn::test::TempDir& dir, const std::string& path, const std::string& name,
                            uint64_t claimed, const std::string& real) {
  const std::string tar = dir.write("claims.tar", tar_header(name, claimed) + real);
  REQUIRE(std::system(("gzip -9 -c '" + tar + "' > '" + path + "'").c_str()) == 0);
}

int64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

}  // namespace

TEST_CASE("tar members: a 100-byte .tar.gz claiming a 3 GB review is refused before it is read") {
  tn::test::TempDir dir("tar_claims_imdb");
  const std::string archive = dir.file("aclImdb_v1.tar.gz");
  write_claiming_archive(dir, archive, "aclImdb/train/pos/0_9.txt", uint64_t{3} << 30, "");
  CHECK(read_file(archive).size() < 200);
  const int64_t before = peak_rss_bytes();
  const std::string message = data_error([&] { (void)read_imdb(archive); });
  INFO(message);
  CHECK(message.find(archive) != std::string::npos);
  CHECK(message.find("aclImdb/train/pos/0_9.txt claims 3221225472 bytes, more than the 1048576") != std::string::npos);
  CHECK(peak_rss_bytes() - before < (int64_t{256} << 20));
}

TEST_CASE("tar members: a CIFAR-10 batch claiming more than 10,000 records is refused before it is read") {
  tn::test::TempDir dir("tar_claims_cifar");
  const std::string archive = dir.file("cifar-10-binary.tar.gz");
  write_claiming_archive(dir, archive, "cifar-10-batches-bin/data_batch_1.bin", uint64_t{3} << 30, "");
  const int64_t before = peak_rss_bytes();
  const std::string message = data_error([&] { (void)read_cifar10(archive); });
  INFO(message);
  CHECK(message.find("claims 3221225472 bytes, more than the 30730000") != std::string::npos);
  CHECK(peak_rss_bytes() - before < (int64_t{256} << 20));
}

TEST_CASE("tar members: a member that claims more than the archive holds is refused as truncated, naming the archive") {
  tn::test::TempDir dir("tar_claims_short");
  const std::string archive = dir.file("aclImdb_v1.tar.gz");
  // Within the cap (1,000,000 bytes claimed), but 12 arrive.
  write_claiming_archive(dir, archive, "aclImdb/train/pos/0_9.txt", 1000000, "a fine film.");
  const std::string message = data_error([&] { (void)read_imdb(archive); });
  INFO(message);
  CHECK(message.find(archive) != std::string::npos);
  CHECK(message.find("truncated or corrupt") != std::string::npos);
}
