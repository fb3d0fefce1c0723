#include "core/platform/io/png_image.h"

#include <png.h>

#include <cstring>
#include <stdexcept>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"

namespace tn {

GrayImage read_png_gray(const std::string& path, int64_t max_side) {
  const std::string bytes = read_file(path, kMaxPngFileBytes, "a PNG image");  // DataError when missing, unreadable, too large
  png_image png;
  std::memset(&png, 0, sizeof png);
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&png, bytes.data(), bytes.size()))
    throw DataError(path + ": not a readable PNG (" + png.message + "); replace the file with a PNG image");
  // The header's size, checked before the pixels are allocated: 10^6 x 10^6 in a 100-byte file
  // would otherwise take width · height bytes (wrapped to 32 bits by PNG_IMAGE_SIZE: 3.3 GB).
  if (static_cast<int64_t>(png.width) > max_side || static_cast<int64_t>(png.height) > max_side) {
    png_image_free(&png);
    throw DataError(path + ": its PNG header claims " + std::to_string(png.width) + "x" + std::to_string(png.height) +
                    " pixels, more than the " + std::to_string(max_side) + "x" + std::to_string(max_side) +
                    " this reader takes; replace the file with an image of the data set's size");
  }
  png.format = PNG_FORMAT_GRAY;
  GrayImage image;
  image.width = png.width;
  image.height = png.height;
  image.pixels.resize(PNG_IMAGE_SIZE(png));
  if (!png_image_finish_read(&png, nullptr, image.pixels.data(), 0, nullptr)) {
    const std::string message = png.message;
    png_image_free(&png);
    throw DataError(path + ": a corrupt PNG (" + message + "); replace the file");
  }
  return image;
}

void write_png_gray(const std::string& path, const GrayImage& image) {
  if (image.width <= 0 || image.height <= 0 || static_cast<int64_t>(image.pixels.size()) != image.width * image.height)
    throw std::invalid_argument("write_png_gray: " + std::to_string(image.pixels.size()) + " pixels for a " +
                                std::to_string(image.width) + "x" + std::to_string(image.height) + " image");
  png_image png;
  std::memset(&png, 0, sizeof png);
  png.version = PNG_IMAGE_VERSION;
  png.width = static_cast<png_uint_32>(image.width);
  png.height = static_cast<png_uint_32>(image.height);
  png.format = PNG_FORMAT_GRAY;
  png_alloc_size_t size = 0;
  if (!png_image_write_to_memory(&png, nullptr, &size, 0, image.pixels.data(), 0, nullptr))
    throw IoError(path + ": cannot encode the PNG (" + std::string(png.message) + ")");
  std::string bytes(size, '\0');
  if (!png_image_write_to_memory(&png, bytes.data(), &size, 0, image.pixels.data(), 0, nullptr))
    throw IoError(path + ": cannot encode the PNG (" + std::string(png.message) + ")");
  bytes.resize(size);
  write_file_atomic(path, bytes);
}

}  // namespace tn
