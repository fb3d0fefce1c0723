#include "data/readers/cifar10.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "data/readers/tar_members.h"
#include "data/readers/text_file.h"

namespace tn {

namespace fs = std::filesystem;

namespace {
const char* const kHint =
    "`transnormer data fetch` fetches the binary version, cifar-10-binary.tar.gz, from www.cs.toronto.edu/~kriz into "
    "<data root>/lra/cifar10; data.path may name the archive, the folder holding it, or the unpacked "
    "cifar-10-batches-bin/ (the python and MATLAB versions are other formats)";
const char* const kFolder = "cifar-10-batches-bin";
const char* const kArchive = "cifar-10-binary.tar.gz";
const char* const kMeta = "batches.meta.txt";
const char* const kTest = "test_batch.bin";
const std::vector<std::string> kTrain = {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                                         "data_batch_4.bin", "data_batch_5.bin"};
constexpr int64_t kPlane = 32 * 32;

/// What has been read so far: the batches by file name, the class names when batches.meta.txt was.
struct Members {
  bool with_test = true;
  std::map<std::string, std::vector<ImageExample>> batches;
  std::vector<std::string> names;
};

bool is_batch(const Members& m, const std::string& name) {
  return std::find(kTrain.begin(), kTrain.end(), name) != kTrain.end() || (m.with_test && name == kTest);
}

/// Parses one member (`name` its file name, `where` the file for messages) into `m`.
void add_member(Members& m, const std::string& name, std::string_view bytes, const std::string& where) {
  if (name == kMeta) {
    m.names = parse_cifar10_meta(bytes, where);
    return;
  }
  if (m.batches.count(name))
    throw DataError(where + ": a second copy of " + name + " (every image would count twice): keep one " + kFolder +
                    "/ and point data.path at it");
  m.batches[name] = parse_cifar10_batch(bytes, name, where);
}

void read_archive(const std::string& path, Members& m) {
  const auto file_name = [&](const std::string& member) {
    const fs::path p(member);
    return p.parent_path().filename() == kFolder ? p.filename().string() : std::string();
  };
  read_tar_members(
      path, [&](const std::string& member) { return file_name(member) == kMeta || is_batch(m, file_name(member)); },
      [&](const std::string& member, std::string bytes) { add_member(m, file_name(member), bytes, path + ":" + member); },
      kHint, kCifar10MaxFileBytes);
}

void read_folder(const fs::path& dir, Members& m) {
  std::vector<std::string> names = kTrain;
  if (m.with_test) names.push_back(kTest);
  names.push_back(kMeta);
  std::error_code ec;
  for (const std::string& name : names)
    if (fs::is_regular_file(dir / name, ec))
      add_member(m, name, read_file((dir / name).string(), kCifar10MaxFileBytes, "a CIFAR-10 batch"),
                 (dir / name).string());
}

/// The train and test images in file order; throws DataError naming `source` for a missing batch.
Cifar10Data assemble(Members& m, const std::string& source) {
  std::vector<std::string> wanted = kTrain, missing;
  if (m.with_test) wanted.push_back(kTest);
  for (const std::string& name : wanted)
    if (!m.batches.count(name)) missing.push_back(std::string(kFolder) + "/" + name);
  if (!missing.empty()) {
    std::string list;
    for (const std::string& name : missing) list += (list.empty() ? "" : ", ") + name;
    throw DataError(source + ": holds no " + list + " (" + kHint + ")");
  }
  Cifar10Data out;
  for (const std::string& name : kTrain)
    for (ImageExample& e : m.batches[name]) out.train.push_back(std::move(e));
  if (m.with_test) out.test = std::move(m.batches[kTest]);
  out.class_names = m.names.empty() ? cifar10_class_names() : m.names;
  out.source = source;
  return out;
}
}  // namespace

const std::vector<std::string>& cifar10_class_names() {
  static const std::vector<std::string> names = {"airplane", "automobile", "bird",  "cat",  "deer",
                                                 "dog",      "frog",       "horse", "ship", "truck"};
  return names;
}

std::vector<ImageExample> parse_cifar10_batch(std::string_view bytes, const std::string& name,
                                              const std::string& where) {
  const auto size = static_cast<int64_t>(bytes.size());
  if (size == 0) throw DataError(where + ": is empty; a CIFAR-10 batch holds 3,073-byte records (" + kHint + ")");
  if (size % kCifar10Record != 0)
    throw DataError(where + ": " + std::to_string(size) + " bytes is not a whole number of 3,073-byte records (a label "
                    "byte and 3,072 pixel bytes): record " + std::to_string(size / kCifar10Record + 1) +
                    " is cut short after " + std::to_string(size % kCifar10Record) +
                    " bytes; the file is truncated or not a CIFAR-10 binary batch: fetch it again (" + kHint + ")");
  std::vector<ImageExample> out(static_cast<size_t>(size / kCifar10Record));
  for (size_t r = 0; r < out.size(); ++r) {
    const auto* record = reinterpret_cast<const uint8_t*>(bytes.data()) + r * kCifar10Record;
    if (record[0] > 9)
      throw DataError(where + ": record " + std::to_string(r + 1) + " (byte offset " +
                      std::to_string(r * kCifar10Record) + "): label byte " + std::to_string(record[0]) +
                      " is not a class 0-9; not a CIFAR-10 binary batch (CIFAR-100's records have two label "
                      "bytes): fetch " + kArchive + " again (" + kHint + ")");
    ImageExample& e = out[r];
    e.id = name + "#" + std::to_string(r + 1);
    e.label = record[0];
    e.line = static_cast<int64_t>(r + 1);
    e.pixels.resize(kPlane);
    const uint8_t *red = record + 1, *green = red + kPlane, *blue = green + kPlane;
    for (int64_t i = 0; i < kPlane; ++i) e.pixels[i] = cifar10_gray(red[i], green[i], blue[i]);
  }
  return out;
}

std::vector<std::string> parse_cifar10_meta(std::string_view text, const std::string& where) {
  std::vector<std::string> names;
  for_each_line(text, [&](int64_t, std::string_view line) {
    const size_t first = line.find_first_not_of(" \t"), last = line.find_last_not_of(" \t");
    if (first != std::string_view::npos) names.emplace_back(line.substr(first, last - first + 1));
  });
  if (names.size() != 10)
    throw DataError(where + ": holds " + std::to_string(names.size()) +
                    " class names, expected 10 (one a line, airplane to truck); restore the file, or delete it to "
                    "use the standard names");
  return names;
}

Cifar10Data read_cifar10(const std::string& path, bool with_test) {
  Members m;
  m.with_test = with_test;
  std::error_code ec;
  const fs::path p(path);
  if (!fs::exists(p, ec)) throw DataError(path + ": no such file or folder (" + std::string(kHint) + ")");
  if (!fs::is_directory(p, ec)) {
    read_archive(path, m);
  } else if (fs::is_directory(p / kFolder, ec)) {
    read_folder(p / kFolder, m);
  } else if (fs::is_regular_file(p / kTrain.front(), ec)) {
    read_folder(p, m);
  } else if (fs::is_regular_file(p / kArchive, ec)) {
    read_archive((p / kArchive).string(), m);
    return assemble(m, (p / kArchive).string());
  }
  return assemble(m, path);
}

}  // namespace tn
