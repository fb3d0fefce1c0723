#pragma once
// 8-bit grayscale images in PNG files, through libpng's simplified API (png.h, libpng 1.6):
// LRA Pathfinder's images (32 x 32, one channel), the generator's output and `data stats`'s dumps.
#include <cstdint>
#include <string>
#include <vector>

namespace tn {

/// A grayscale image: `pixels` row-major, width * height bytes, 0 black to 255 white.
struct GrayImage {
  int64_t width = 0, height = 0;
  std::vector<uint8_t> pixels;
};

/// Reads a PNG of any colour type as 8-bit grayscale (colour is converted by libpng's own
/// luminance, alpha composited on black). Throws DataError naming `path`: missing, unreadable,
/// not a PNG, or corrupt (with libpng's message).
GrayImage read_png_gray(const std::string& path);

/// Writes `image` as an 8-bit grayscale PNG, atomically (core/io/atomic_file.h). Throws IoError
/// naming `path` when it cannot be written; std::invalid_argument for a pixel count that is not
/// width * height.
void write_png_gray(const std::string& path, const GrayImage& image);

}  // namespace tn
