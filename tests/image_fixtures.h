#pragma once
// Small image datasets in the exact published layouts, for the image readers', `data stats`' and
// the CLI's tests: CIFAR-10's binary batches (a label byte, then the red, green and blue 32 x 32
// planes) and a Pathfinder root (metadata/<n>.npy text lines, imgs/<n>/*.png).
#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/platform/io/atomic_file.h"
#include "core/platform/io/png_image.h"

namespace tn::test {

using Rgb = std::array<uint8_t, 3>;

/// One 3,073-byte CIFAR-10 record: `label`, then pixel i's red, green and blue from `pixel(i)`,
/// plane by plane.
inline std::string cifar_record(uint8_t label, const std::function<Rgb(int)>& pixel) {
  std::string r(1 + 3 * 1024, '\0');
  r[0] = static_cast<char>(label);
  for (int i = 0; i < 1024; ++i) {
    const Rgb c = pixel(i);
    for (int plane = 0; plane < 3; ++plane) r[1 + plane * 1024 + i] = static_cast<char>(c[plane]);
  }
  return r;
}

/// Record k of data_batch_b: label (b + k) % 10, every pixel at level b*16 + k (R = G = B).
inline std::string cifar_plain_record(int b, int k) {
  const auto v = static_cast<uint8_t>(b * 16 + k);
  return cifar_record(static_cast<uint8_t>((b + k) % 10), [v](int) { return Rgb{v, v, v}; });
}

/// `root`/cifar-10-batches-bin/ (returned): data_batch_1..5 with `per_batch` plain records each;
/// test_batch with 3 records (label 3: pixel 0 red, pixel 1 green, the rest blue; label 9: white
/// but pixel 33 = (10, 200, 30); label 0: (1, 1, 1) and (0, 1, 0) alternating); batches.meta.txt
/// (`meta`, else the ten names with the trailing blank line of the published file); readme.html.
inline std::string write_cifar_batches(const std::filesystem::path& root, int per_batch, const std::string& meta = "") {
  const std::filesystem::path dir = root / "cifar-10-batches-bin";
  std::filesystem::create_directories(dir);
  for (int b = 1; b <= 5; ++b) {
    std::string bytes;
    for (int k = 0; k < per_batch; ++k) bytes += cifar_plain_record(b, k);
    write_file_atomic((dir / ("data_batch_" + std::to_string(b) + ".bin")).string(), bytes);
  }
  std::string test;
  test += cifar_record(3, [](int i) { return i == 0 ? Rgb{255, 0, 0} : i == 1 ? Rgb{0, 255, 0} : Rgb{0, 0, 255}; });
  test += cifar_record(9, [](int i) { return i == 33 ? Rgb{10, 200, 30} : Rgb{255, 255, 255}; });
  test += cifar_record(0, [](int i) { return i % 2 ? Rgb{0, 1, 0} : Rgb{1, 1, 1}; });
  write_file_atomic((dir / "test_batch.bin").string(), test);
  write_file_atomic((dir / "batches.meta.txt").string(),
                    meta.empty() ? "airplane\nautomobile\nbird\ncat\ndeer\ndog\nfrog\nhorse\nship\ntruck\n\n" : meta);
  write_file_atomic((dir / "readme.html").string(), "<html></html>");
  return dir.string();
}

/// A size x size grayscale PNG whose pixel i is (i + seed) % 256.
inline void write_pattern_png(const std::string& path, int64_t size, int seed) {
  GrayImage image{size, size, std::vector<uint8_t>(static_cast<size_t>(size * size))};
  for (size_t i = 0; i < image.pixels.size(); ++i) image.pixels[i] = static_cast<uint8_t>((i + seed) % 256);
  write_png_gray(path, image);
}

/// A Pathfinder root at `root`: metadata/10.npy and metadata/2.npy (2 is read first: by number,
/// not spelling), each listing `per_file` 32 x 32 images imgs/<n>/sample_<i>.png with label i % 2
/// and the generator's trailing fields; image (n, i) is write_pattern_png with seed n * 100 + i.
/// Also metadata/notes.txt, which is not metadata.
inline void write_pathfinder_tree(const std::filesystem::path& root, int per_file) {
  std::filesystem::create_directories(root / "metadata");
  for (int n : {10, 2}) {
    std::filesystem::create_directories(root / "imgs" / std::to_string(n));
    std::string meta;
    for (int i = 0; i < per_file; ++i) {
      const std::string name = "sample_" + std::to_string(i) + ".png";
      write_pattern_png((root / "imgs" / std::to_string(n) / name).string(), 32, n * 100 + i);
      meta += "imgs/" + std::to_string(n) + " " + name + " " + std::to_string(i) + " " + std::to_string(i % 2) +
              " 1.0 14 4 2 0.5 1 1\n";
    }
    write_file_atomic((root / "metadata" / (std::to_string(n) + ".npy")).string(), meta);
  }
  write_file_atomic((root / "metadata" / "notes.txt").string(), "not metadata");
}

}  // namespace tn::test
