#pragma once
// Images as the classification core takes them (LRA Image and Pathfinder, Tay et al. 2021 §3):
// each image a sequence of its height · width grayscale levels in row-major order, the levels
// (0..255) being the model's ids. model.input decides what the model makes of them: Linear(1 → d)
// over (level − mean) / std (input.kind: linear, the TransNormer LRA encoder), or a learned
// embedding of 256 levels (input.kind: tokens, as the official LRA JAX code feeds raw levels).
#include <vector>

#include "data/readers/reader.h"
#include "data/encoding/labelled_sequences.h"

namespace tn {

/// The grayscale levels every image reader yields, the vocabulary's size.
constexpr int32_t kPixelLevels = 256;

/// The splits as sequences of levels, with the vocabulary "0".."255" (no padding is ever needed:
/// every image of a reader has the same size; id 0 pads nominally) and the dataset's classes.
/// Throws DataError naming the split's file when
/// an image's pixel count is not the reader's width · height or a label is outside the classes.
EncodedData encode_images(std::vector<ImageSplit> splits, const ImageSource& source);

/// The DatasetInfo of an image reader: classes named by label_names(), scored by accuracy,
/// predictions written as the class name (the names as they are now: after read_images, which may
/// read them from the data); no submission format.
DatasetInfo image_dataset_info(const ImageSource& source);

}  // namespace tn
