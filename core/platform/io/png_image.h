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

/// The widest and tallest image read_png_gray takes unless told otherwise: 4,096 pixels (LRA's
/// largest, Path-X, is 128 x 128; 4096² bytes is 16 MiB of pixels).
constexpr int64_t kMaxPngSide = 4096;
/// The largest PNG file read: 64 MiB (an 8-bit 4096 x 4096 image is 16 MiB before compression).
constexpr uint64_t kMaxPngFileBytes = uint64_t{64} << 20;

/// Reads a PNG of any colour type as 8-bit grayscale (colour is converted by libpng's own
/// luminance, alpha composited on black). The header's width and height are checked against
/// `max_side` before the pixels are allocated. Throws DataError naming `path`: missing,
/// unreadable, a file over kMaxPngFileBytes, not a PNG, larger than max_side x max_side (with the
/// size it claims), or corrupt (with libpng's message).
GrayImage read_png_gray(const std::string& path, int64_t max_side = kMaxPngSide);

/// Writes `image` as an 8-bit grayscale PNG, atomically (core/platform/io/atomic_file.h). Throws IoError
/// naming `path` when it cannot be written; std::invalid_argument for a pixel count that is not
/// width * height.
void write_png_gray(const std::string& path, const GrayImage& image);

}  // namespace tn
