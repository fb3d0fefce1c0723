#include "experiments/inspection/image_dump.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <stdexcept>

#include "core/error.h"

namespace tn {

GrayImage upscale_nearest(const GrayImage& image, int64_t factor) {
  if (factor < 1) throw std::invalid_argument("upscale_nearest: factor " + std::to_string(factor) + " < 1");
  GrayImage out{image.width * factor, image.height * factor, {}};
  out.pixels.resize(static_cast<size_t>(out.width * out.height));
  for (int64_t y = 0; y < out.height; ++y)
    for (int64_t x = 0; x < out.width; ++x)
      out.pixels[static_cast<size_t>(y * out.width + x)] =
          image.pixels[static_cast<size_t>((y / factor) * image.width + x / factor)];
  return out;
}

std::string dump_file_name(const std::string& split, int64_t index, int32_t label,
                           const std::vector<std::string>& label_names) {
  std::string name = fmt::format("{}_{:05d}_label{}", split, index, label);
  if (label >= 0 && label < static_cast<int32_t>(label_names.size()) &&
      label_names[static_cast<size_t>(label)] != std::to_string(label)) {
    std::string clean;
    for (char c : label_names[static_cast<size_t>(label)])
      clean += (std::isalnum(static_cast<unsigned char>(c)) || c == '-') ? c : '-';
    name += "_" + clean;
  }
  return name + ".png";
}

std::vector<std::string> dump_images(const std::vector<ImageSplit>& splits, int64_t width, int64_t height,
                                     const std::vector<std::string>& label_names, int64_t per_split,
                                     const std::string& dir, int64_t factor) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw IoError(dir + ": cannot create the folder (" + ec.message() + ")");
  std::vector<std::string> written;
  for (const ImageSplit& split : splits) {
    const auto n = std::min<int64_t>(per_split, static_cast<int64_t>(split.rows.size()));
    for (int64_t i = 0; i < n; ++i) {
      const ImageExample& e = split.rows[static_cast<size_t>(i)];
      const GrayImage image{width, height, e.pixels};
      const std::string path = (std::filesystem::path(dir) / dump_file_name(split.name, i, e.label, label_names)).string();
      write_png_gray(path, upscale_nearest(image, factor));
      written.push_back(path);
    }
  }
  return written;
}

}  // namespace tn
