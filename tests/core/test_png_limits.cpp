// A PNG's header is checked before its pixels are allocated (hostile-input campaign, class 2): a
// 100-byte PNG that claims 10^6 x 10^6 pixels took 3.5 GB (width · height wrapped to 32 bits by
// libpng's PNG_IMAGE_SIZE) before libpng found the data missing.
#include <doctest/doctest.h>
#include <sys/resource.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "core/platform/io/png_image.h"
#include "tests/temp_dir.h"

using namespace tn;

namespace {

/// The CRC-32 of PNG chunks (ISO 3309, as zlib's crc32).
uint32_t crc32(const std::string& bytes) {
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char c : bytes) {
    crc ^= c;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return crc ^ 0xFFFFFFFFu;
}

void put_be32(std::string& bytes, size_t at, uint32_t value) {
  for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<char>((value >> (24 - 8 * i)) & 0xFF);
}

/// A valid 1 x 1 PNG whose IHDR then claims `width` x `height` (its CRC fixed, so libpng reads the
/// header as sound): a hundred bytes.
std::string claiming_png(const tn::test::TempDir& dir, uint32_t width, uint32_t height) {
  const std::string small = dir.file("one_pixel.png");
  write_png_gray(small, GrayImage{1, 1, {128}});
  std::string bytes = read_file(small);
  REQUIRE(bytes.substr(12, 4) == "IHDR");
  put_be32(bytes, 16, width);
  put_be32(bytes, 20, height);
  put_be32(bytes, 29, crc32(bytes.substr(12, 17)));  // "IHDR" and its 13 data bytes
  return bytes;
}

int64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

}  // namespace

TEST_CASE("png limits: a header claiming 10^6 x 10^6 pixels is refused before the pixels are allocated") {
  tn::test::TempDir dir("png_claims");
  const std::string bytes = claiming_png(dir, 1000000, 1000000);
  CHECK(bytes.size() < 120);
  const std::string path = dir.write("huge.png", bytes);
  const int64_t before = peak_rss_bytes();
  try {
    (void)read_png_gray(path);
    FAIL("a PNG claiming 10^6 x 10^6 pixels was read");
  } catch (const DataError& e) {
    const std::string message = e.what();
    INFO(message);
    CHECK(message.find(path) != std::string::npos);
    CHECK(message.find("claims 1000000x1000000 pixels, more than the 4096x4096") != std::string::npos);
  }
  CHECK(peak_rss_bytes() - before < (int64_t{256} << 20));
}

TEST_CASE("png limits: the caller's size bounds what is read, and an image within it still reads") {
  tn::test::TempDir dir("png_side");
  GrayImage image{16, 16, std::vector<uint8_t>(256, 7)};
  const std::string path = dir.file("sixteen.png");
  write_png_gray(path, image);
  CHECK_THROWS_WITH_AS(read_png_gray(path, 8), doctest::Contains("claims 16x16 pixels, more than the 8x8"), DataError);
  CHECK(read_png_gray(path, 16).pixels == image.pixels);
  // Within the default bound, only wide: the header is sound, the missing data is libpng's to find.
  const std::string wide = dir.write("wide.png", claiming_png(dir, 4096, 1));
  CHECK_THROWS_WITH_AS(read_png_gray(wide), doctest::Contains("corrupt PNG"), DataError);
}

TEST_CASE("png limits: a file over 64 MiB is refused by its size, before it is read") {
  tn::test::TempDir dir("png_file_size");
  const std::string path = dir.write("sparse.png", claiming_png(dir, 32, 32));
  std::filesystem::resize_file(path, uint64_t{80} << 20);  // sparse: no disk, and it must take no memory
  const int64_t before = peak_rss_bytes();
  CHECK_THROWS_WITH_AS(read_png_gray(path), doctest::Contains("over the limit of 67108864 bytes for a PNG image"), DataError);
  CHECK(peak_rss_bytes() - before < (int64_t{32} << 20));
}
