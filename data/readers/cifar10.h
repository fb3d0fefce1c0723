#pragma once
// Reading CIFAR-10 (Krizhevsky 2009, www.cs.toronto.edu/~kriz/cifar.html) in its binary version,
// the images of LRA's Image task. cifar-10-binary.tar.gz holds cifar-10-batches-bin/ with
// data_batch_1.bin .. data_batch_5.bin (training), test_batch.bin and batches.meta.txt (the class
// names, one a line). A batch file is a sequence of 3,073-byte records (10,000 in the published
// files): one label byte 0-9, then the 32 x 32 red plane, the green plane and the blue plane, 1,024
// bytes each in row-major order. Read from the archive as published (libarchive) or from the
// unpacked folder.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/readers/reader.h"

namespace tn {

/// Bytes of one record: the label byte and three 32 x 32 planes.
inline constexpr int64_t kCifar10Record = 1 + 3 * 32 * 32;
/// The largest file the reader takes: a batch of 10,000 records (30,730,000 bytes), the size of every
/// published batch; a larger member or file is refused before it is read.
inline constexpr int64_t kCifar10MaxFileBytes = 10000 * kCifar10Record;

/// The images of both splits and the class names.
struct Cifar10Data {
  std::vector<ImageExample> train;       // data_batch_1..5 in that order, records in file order
  std::vector<ImageExample> test;        // test_batch; empty when not read
  std::vector<std::string> class_names;  // from batches.meta.txt when present, else cifar10_class_names()
  std::string source;                    // the archive or folder read
};

/// The ten classes in label order: airplane, automobile, bird, cat, deer, dog, frog, horse, ship,
/// truck.
const std::vector<std::string>& cifar10_class_names();

/// The grayscale level of one RGB pixel as the official TransNormer loader gets it (torchvision's
/// Grayscale, i.e. Pillow's convert('L')): the ITU-R 601 luma in 16-bit fixed point, rounded,
/// (19595·R + 38470·G + 7471·B + 0x8000) >> 16. The weights sum to 65536, so white stays 255.
inline uint8_t cifar10_gray(uint8_t r, uint8_t g, uint8_t b) {
  return static_cast<uint8_t>((19595u * r + 38470u * g + 7471u * b + 0x8000u) >> 16);
}

/// The records of one batch file's `bytes` as grayscale 32 x 32 images: ids "<name>#<record>",
/// `line` the 1-based record number. `where` names the file in messages (path, or archive:member).
/// Throws DataError naming `where`: empty; a size that is not a whole number of records (naming the
/// record that is cut short); a label byte above 9 (naming the record).
std::vector<ImageExample> parse_cifar10_batch(std::string_view bytes, const std::string& name,
                                              const std::string& where);

/// The class names of batches.meta.txt's `text`: its non-blank lines, trimmed. Throws DataError
/// naming `where` unless there are exactly ten.
std::vector<std::string> parse_cifar10_meta(std::string_view text, const std::string& where);

/// Reads `path`: the archive (cifar-10-binary.tar.gz, any tar compression; members under
/// cifar-10-batches-bin/), a folder holding that archive, a folder holding cifar-10-batches-bin/,
/// or cifar-10-batches-bin/ itself. `with_test` false skips test_batch.bin. Throws DataError naming
/// the path (missing; a truncated or corrupt archive, with libarchive's message; a batch file
/// missing or held twice) or the batch file and record (as parse_cifar10_batch), each with the fix.
Cifar10Data read_cifar10(const std::string& path, bool with_test = true);

}  // namespace tn
