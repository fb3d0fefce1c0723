#pragma once
// Reading LRA's Pathfinder images (Linsley et al. 2018; Tay et al. 2021) in the layout of the LRA
// release, e.g. lra_release/pathfinder32/curv_contour_length_14/:
//   metadata/<n>.npy   despite the extension, text: one line per image, fields separated by spaces:
//                      subfolder (imgs/0), file name (sample_0.png), index, label (1: the two
//                      markers lie on one path, 0: not), then the generator's settings
//   imgs/<n>/*.png     the images, 8-bit grayscale, image_size x image_size
// The official loaders read the metadata files in the order of their numbers (int of the file
// name, not its spelling: 2.npy before 10.npy) and the lines in file order, using fields 0, 1 and 3
// only; so does this reader.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/readers/reader.h"

namespace tn {

/// One metadata line: where the image is and its label.
struct PathfinderEntry {
  std::string metadata;  // the metadata file, for messages
  int64_t line = 0;      // 1-based line in it
  std::string image;     // "<subfolder>/<file name>", relative to the root
  int32_t label = 0;     // 0 or 1
};

/// The entries of one metadata file's `text` (`path` names it in messages), blank lines skipped.
/// Throws DataError at path:line for a line of fewer than 4 whitespace-separated fields, a label
/// (field 3) other than 0 or 1, or an image path that leaves the dataset (absolute, or with a ..
/// component: `../../etc/shadow`, `/proc/self/environ`); naming the path for a binary NumPy file
/// (the LRA release's are text).
std::vector<PathfinderEntry> parse_pathfinder_metadata(std::string_view text, const std::string& path);

/// The metadata files of `root`/metadata (every *.npy), sorted by the integer of their names.
/// Throws DataError naming the folder when it is missing or holds no .npy file, and naming a file
/// whose name is not <integer>.npy or that is a symbolic link leading outside `root`.
std::vector<std::string> pathfinder_metadata_files(const std::string& root);

/// The images of `root` in metadata order, at most `max_examples` of them (0: all; the files are
/// then read only as far as needed). Each is image_size x image_size; ids are the entries' image
/// paths, `line` their metadata line. Throws DataError at metadata:line for a malformed line, a
/// missing image, an image that a symbolic link takes outside `root` (only files below the root are
/// read), a file that is not a PNG, or a PNG of another size; naming `root` when it holds no image.
std::vector<ImageExample> read_pathfinder(const std::string& root, int64_t image_size, int64_t max_examples = 0);

}  // namespace tn
