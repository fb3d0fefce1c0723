#pragma once
// `data stats --images N --images-dir DIR`: the first N examples of each split written as PNG
// files, enlarged by nearest neighbour so that a 32 x 32 image can be looked at, to see what the
// model is given (the grayscale levels, in the split's order).
#include <cstdint>
#include <string>
#include <vector>

#include "core/platform/io/png_image.h"
#include "data/readers/reader.h"

namespace tn {

/// `image` enlarged `factor` times in each direction, every pixel becoming a factor x factor
/// block. Throws std::invalid_argument when factor < 1.
GrayImage upscale_nearest(const GrayImage& image, int64_t factor);

/// The file name of example `index` of `split`: "<split>_<index, 5 digits>_label<k>[_<name>].png",
/// the class name added when it is not the number itself and reduced to [A-Za-z0-9-]
/// ("train_00003_label7_horse.png", "valid_00000_label1.png").
std::string dump_file_name(const std::string& split, int64_t index, int32_t label,
                           const std::vector<std::string>& label_names);

/// Writes the first `per_split` examples of every split (each width x height levels) into `dir`
/// (created when missing), enlarged `factor` times; returns the paths written, split by split.
/// Throws IoError naming a file that cannot be written.
std::vector<std::string> dump_images(const std::vector<ImageSplit>& splits, int64_t width, int64_t height,
                                     const std::vector<std::string>& label_names, int64_t per_split,
                                     const std::string& dir, int64_t factor);

}  // namespace tn
