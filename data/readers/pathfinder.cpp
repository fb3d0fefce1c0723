#include "data/readers/pathfinder.h"

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "core/platform/io/png_image.h"
#include "data/readers/text_file.h"

namespace tn {

namespace fs = std::filesystem;

namespace {
/// Where a Pathfinder set in `root` comes from.
std::string hint(const std::string& root) {
  return "make one there with `transnormer data generate pathfinder --out " + root +
         " --count N --contour-length L` (the count and difficulty the spec's comment gives; LRA's own is "
         "--count 200000 --contour-length 14), or unpack the LRA release's "
         "lra_release/pathfinder32/curv_contour_length_14 (in the 8.23 GB lra_release.gz) into it";
}

std::vector<std::string_view> split_spaces(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (true) {
    i = line.find_first_not_of(" \t\v\f", i);
    if (i == std::string_view::npos) break;
    const size_t end = std::min(line.find_first_of(" \t\v\f", i), line.size());
    fields.push_back(line.substr(i, end - i));
    i = end;
  }
  return fields;
}

/// The integer a metadata file's stem spells, or -1 when it is not digits only.
int64_t stem_number(const std::string& stem) {
  if (stem.empty() || stem.size() > 18 || !std::all_of(stem.begin(), stem.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return -1;
  return std::stoll(stem);
}

/// Whether `path` is relative and has no ".." component: a path that stays below the folder it is
/// taken from (as far as its text goes; links are checked on the files).
bool stays_below(std::string_view path) {
  if (path.empty() || path[0] == '/') return false;
  for (size_t start = 0; start <= path.size();) {
    const size_t end = std::min(path.find('/', start), path.size());
    if (path.substr(start, end - start) == "..") return false;
    start = end + 1;
  }
  return true;
}

/// Whether the resolved path `real` lies inside the resolved folder `root`.
bool inside(const fs::path& real, const fs::path& root) {
  auto r = real.begin();
  for (auto it = root.begin(); it != root.end(); ++it, ++r)
    if (r == real.end() || *r != *it) return false;
  return true;
}

/// The DataError of a file that a link takes outside the dataset's root.
DataError leads_out(const std::string& where, const std::string& what, const fs::path& real, const fs::path& root) {
  return DataError(where + ": " + what + " leads outside the dataset's root " + root.string() + " (to " +
                   real.string() + ", through a symbolic link); a dataset's files are read only below its root: " +
                   "put the file itself there, or remove the line");
}

/// The image of `entry` below `root` (`real_root`: root resolved), checked: it exists below the
/// root (a symbolic link leading out is refused), is a PNG, and is size x size.
ImageExample read_entry(const fs::path& root, const fs::path& real_root, const PathfinderEntry& entry, int64_t size) {
  const std::string where = at_line(entry.metadata, entry.line);
  const fs::path file = root / entry.image;
  std::error_code ec;
  const fs::path real = fs::canonical(file, ec);
  if (ec || !fs::is_regular_file(real, ec))
    throw DataError(where + ": the image " + entry.image + " is missing (" + file.string() +
                    "); restore it, or remove the line (" + hint(root.string()) + ")");
  if (!inside(real, real_root)) throw leads_out(where, "the image " + entry.image, real, real_root);
  GrayImage png;
  try {
    png = read_png_gray(real.string(), size);  // a larger header is refused before its pixels are allocated
  } catch (const DataError& e) {
    throw DataError(where + ": " + e.what());
  }
  if (png.width != size || png.height != size)
    throw DataError(where + ": " + entry.image + " is " + std::to_string(png.width) + "x" + std::to_string(png.height) +
                    ", expected " + std::to_string(size) + "x" + std::to_string(size) +
                    " (data.image_size); point data.dir at the folder of the resolution you mean");
  ImageExample e;
  e.id = entry.image;
  e.pixels = std::move(png.pixels);
  e.label = entry.label;
  e.line = entry.line;
  return e;
}
}  // namespace

std::vector<PathfinderEntry> parse_pathfinder_metadata(std::string_view text, const std::string& path) {
  if (text.substr(0, 6) == "\x93NUMPY")
    throw DataError(path + ": is a binary NumPy file; the loaders read Pathfinder metadata as text (one line per "
                    "image: subfolder, file name, index, label, ...), as in the LRA release's "
                    "lra_release/pathfinder32/curv_contour_length_14/metadata and as `transnormer data generate "
                    "pathfinder` writes them");
  std::vector<PathfinderEntry> out;
  for_each_line(text, [&](int64_t line, std::string_view row) {
    const std::vector<std::string_view> fields = split_spaces(row);
    if (fields.empty()) return;
    if (fields.size() < 4)
      throw DataError(at_line(path, line) + ": " + std::to_string(fields.size()) +
                      " fields, expected at least 4 separated by spaces (subfolder, file name, index, label); fix or "
                      "remove the line");
    if (fields[3] != "0" && fields[3] != "1")
      throw DataError(at_line(path, line) + ": label \"" + std::string(fields[3].substr(0, 20)) +
                      "\" (field 4) is not 0 or 1; fix or remove the line");
    std::string image = std::string(fields[0]) + "/" + std::string(fields[1]);
    if (!stays_below(image))
      throw DataError(at_line(path, line) + ": the image path \"" + image.substr(0, 200) +
                      "\" leaves the dataset (an absolute path or a .. component); a Pathfinder set's images are " +
                      "below its root (imgs/<n> sample_<i>.png): fix or remove the line");
    out.push_back({path, line, std::move(image), fields[3] == "1" ? 1 : 0});
  });
  return out;
}

std::vector<std::string> pathfinder_metadata_files(const std::string& root) {
  const fs::path dir = fs::path(root) / "metadata";
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw DataError(dir.string() + ": no such folder; a Pathfinder root holds metadata/ and imgs/: " + hint(root));
  std::vector<std::pair<int64_t, std::string>> files;
  const fs::path real_root = fs::canonical(root, ec);
  for (const fs::directory_entry& f : fs::directory_iterator(dir)) {
    if (!f.is_regular_file() || f.path().extension() != ".npy") continue;
    if (const fs::path real = fs::canonical(f.path(), ec); !ec && !inside(real, real_root))
      throw leads_out(f.path().string(), "the metadata file", real, real_root);
    const int64_t number = stem_number(f.path().stem().string());
    if (number < 0)
      throw DataError(f.path().string() + ": a metadata file's name is its batch number (0.npy, 1.npy, ...); rename "
                      "or remove it");
    files.emplace_back(number, f.path().string());
  }
  if (files.empty()) throw DataError(dir.string() + ": holds no <n>.npy metadata file; " + hint(root));
  std::sort(files.begin(), files.end());
  std::vector<std::string> out;
  for (auto& [number, path] : files) out.push_back(std::move(path));
  return out;
}

std::vector<ImageExample> read_pathfinder(const std::string& root, int64_t image_size, int64_t max_examples) {
  std::vector<ImageExample> out;
  std::error_code ec;
  const fs::path real_root = fs::canonical(root, ec);
  for (const std::string& metadata : pathfinder_metadata_files(root)) {
    for (const PathfinderEntry& entry : parse_pathfinder_metadata(read_file(metadata), metadata)) {
      if (max_examples > 0 && static_cast<int64_t>(out.size()) == max_examples) return out;
      out.push_back(read_entry(root, real_root, entry, image_size));
    }
  }
  if (out.empty()) throw DataError(root + ": its metadata files list no image; " + hint(root));
  return out;
}

}  // namespace tn
