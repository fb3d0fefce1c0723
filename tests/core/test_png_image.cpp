// PNG files through libpng: an 8-bit grayscale image written and read back byte for byte, a colour
// PNG read as libpng's grayscale, and unreadable files refused with their path.
#include <doctest/doctest.h>

#include <string>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "core/platform/io/png_image.h"
#include "tests/temp_dir.h"

using namespace tn;

TEST_CASE("png: a grayscale image round-trips exactly, whatever its size") {
  tn::test::TempDir dir("png");
  GrayImage image;
  image.width = 7;
  image.height = 3;
  for (int64_t i = 0; i < 21; ++i) image.pixels.push_back(static_cast<uint8_t>(i * 12));  // 0, 12, ..., 240
  const std::string path = (dir.path / "ramp.png").string();
  write_png_gray(path, image);
  const GrayImage back = read_png_gray(path);
  CHECK(back.width == 7);
  CHECK(back.height == 3);
  CHECK(back.pixels == image.pixels);
  // The PNG signature, as any viewer expects it.
  CHECK(read_file(path).substr(1, 3) == "PNG");
}

TEST_CASE("png: wrong pixel counts, missing files and files that are not PNGs are refused") {
  tn::test::TempDir dir("png_bad");
  GrayImage short_image{4, 4, std::vector<uint8_t>(15, 0)};
  CHECK_THROWS_AS(write_png_gray((dir.path / "x.png").string(), short_image), std::invalid_argument);
  const std::string missing = (dir.path / "missing.png").string();
  CHECK_THROWS_WITH_AS(read_png_gray(missing), doctest::Contains(missing.c_str()), DataError);
  const std::string text = dir.write("text.png", "not an image at all");
  CHECK_THROWS_WITH_AS(read_png_gray(text), doctest::Contains("not a readable PNG"), DataError);
  // A PNG cut short: the header reads, the pixels do not.
  GrayImage big{64, 64, std::vector<uint8_t>(64 * 64)};
  for (size_t i = 0; i < big.pixels.size(); ++i) big.pixels[i] = static_cast<uint8_t>((i * 7919) % 251);
  write_png_gray((dir.path / "big.png").string(), big);
  const std::string bytes = read_file(dir.file("big.png"));
  const std::string cut = dir.write("cut.png", bytes.substr(0, bytes.size() / 2));
  CHECK_THROWS_AS(read_png_gray(cut), DataError);
}
