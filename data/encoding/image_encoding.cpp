#include "data/encoding/image_encoding.h"

#include "core/error.h"

namespace tn {

DatasetInfo image_dataset_info(const ImageSource& source) {
  SentenceTarget target;
  target.label_names = source.label_names();
  target.num_classes = static_cast<int32_t>(target.label_names.size());
  target.metrics = {"accuracy"};
  return DatasetInfo{source.dataset_name(), target, [](const std::string&) { return std::string(); },
                     [names = target.label_names](int32_t c, double) { return names.at(static_cast<size_t>(c)); }};
}

EncodedData encode_images(std::vector<ImageSplit> splits, const ImageSource& source) {
  EncodedData out;
  out.dataset = image_dataset_info(source);
  const int64_t pixels = source.width() * source.height();
  const int32_t classes = out.dataset.target.num_classes;
  for (ImageSplit& split : splits) {
    LabelledSequences e;
    e.name = split.name;
    e.role = split.role;
    e.file = split.file;
    e.labelled = split.labelled;
    for (ImageExample& image : split.rows) {
      if (static_cast<int64_t>(image.pixels.size()) != pixels)
        throw DataError(split.file + ": " + image.id + " has " + std::to_string(image.pixels.size()) + " pixels, not " +
                        std::to_string(source.width()) + "x" + std::to_string(source.height()) +
                        "; every image of a split must have the reader's size");
      if (split.labelled && (image.label < 0 || image.label >= classes))
        throw DataError(split.file + ": " + image.id + " has label " + std::to_string(image.label) + ", outside 0.." +
                        std::to_string(classes - 1));
      e.inputs.emplace_back(image.pixels.begin(), image.pixels.end());
      std::vector<uint8_t>().swap(image.pixels);  // the bytes are no longer needed
      e.lengths.push_back(pixels);
      e.source_lengths.push_back(pixels);
      e.labels.push_back(split.labelled ? image.label : -1);
      e.targets.push_back(NAN);
      e.ids.push_back(image.id);
      e.symbols += pixels;
    }
    out.splits.push_back(std::move(e));
  }
  for (int32_t level = 0; level < kPixelLevels; ++level) out.vocabulary.push_back(std::to_string(level));
  out.pad = 0;
  return out;
}

}  // namespace tn
