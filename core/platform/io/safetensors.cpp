#include "core/platform/io/safetensors.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "core/platform/io/json_errors.h"

namespace tn {
namespace {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; a big-endian host needs byte swaps here");

constexpr const char* kMetadataKey = "__metadata__";
constexpr const char* kLoadFix =
    "the file is damaged or not a safetensors file: re-copy it, or re-create it with "
    "`transnormer train` / the reference's make-golden";

enum class Dtype { F32, F64, F16, BF16, I64, I32, I16, I8, U8, BOOL };

struct DtypeInfo {
  const char* code;
  Dtype dtype;
  int64_t itemsize;
};

constexpr DtypeInfo kDtypes[] = {
    {"F32", Dtype::F32, 4}, {"F64", Dtype::F64, 8}, {"F16", Dtype::F16, 2},
    {"BF16", Dtype::BF16, 2}, {"I64", Dtype::I64, 8}, {"I32", Dtype::I32, 4},
    {"I16", Dtype::I16, 2}, {"I8", Dtype::I8, 1},   {"U8", Dtype::U8, 1},
    {"BOOL", Dtype::BOOL, 1},
};

const DtypeInfo* find_dtype(std::string_view code) {
  for (const DtypeInfo& info : kDtypes)
    if (code == info.code) return &info;
  return nullptr;
}

/// IEEE half (binary16) bits to float, exact for every value incl. subnormals, inf and NaN.
float half_to_float(uint16_t half) {
  const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  const uint32_t exponent = (half >> 10) & 0x1Fu;
  const uint32_t mantissa = half & 0x3FFu;
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // 0 or subnormal
    return sign ? -magnitude : magnitude;
  }
  const uint32_t bits = exponent == 31 ? (sign | 0x7F800000u | (mantissa << 13))
                                       : (sign | ((exponent + 112) << 23) | (mantissa << 13));
  return std::bit_cast<float>(bits);
}

template <typename T>
T read_le(const char* src) {
  T value;
  std::memcpy(&value, src, sizeof(T));
  return value;
}

/// Converts `count` little-endian elements of `dtype` at `src` to float.
void convert_to_f32(Dtype dtype, const char* src, int64_t count, float* dst) {
  switch (dtype) {
    case Dtype::F32:
      if (count) std::memcpy(dst, src, static_cast<size_t>(count) * sizeof(float));
      return;
    case Dtype::F64:
      for (int64_t i = 0; i < count; ++i) dst[i] = static_cast<float>(read_le<double>(src + 8 * i));
      return;
    case Dtype::F16:
      for (int64_t i = 0; i < count; ++i) dst[i] = half_to_float(read_le<uint16_t>(src + 2 * i));
      return;
    case Dtype::BF16:
      for (int64_t i = 0; i < count; ++i)
        dst[i] = std::bit_cast<float>(static_cast<uint32_t>(read_le<uint16_t>(src + 2 * i)) << 16);
      return;
    case Dtype::I64:
      for (int64_t i = 0; i < count; ++i) dst[i] = static_cast<float>(read_le<int64_t>(src + 8 * i));
      return;
    case Dtype::I32:
      for (int64_t i = 0; i < count; ++i) dst[i] = static_cast<float>(read_le<int32_t>(src + 4 * i));
      return;
    case Dtype::I16:
      for (int64_t i = 0; i < count; ++i) dst[i] = static_cast<float>(read_le<int16_t>(src + 2 * i));
      return;
    case Dtype::I8:
      for (int64_t i = 0; i < count; ++i) dst[i] = static_cast<float>(static_cast<int8_t>(src[i]));
      return;
    case Dtype::U8:
      for (int64_t i = 0; i < count; ++i) dst[i] = static_cast<float>(static_cast<uint8_t>(src[i]));
      return;
    case Dtype::BOOL:
      for (int64_t i = 0; i < count; ++i) dst[i] = src[i] != 0 ? 1.0f : 0.0f;
      return;
  }
}

/// Validates a header's JSON against a data section of `data_size` bytes; failures name the file.
class HeaderParser {
 public:
  HeaderParser(const std::string& path, uint64_t data_size) : path_(path), data_size_(data_size) {}

  /// Parses and validates the header text: every entry against the data section, the ranges tiling
  /// it exactly, the metadata a string map.
  SafetensorsHeader parse(const char* begin, const char* end) const {
    nlohmann::json header;
    try {
      header = nlohmann::json::parse(begin, end);
    } catch (const nlohmann::json::exception& err) {
      fail("header is " + json_error_message(err));
    }
    if (!header.is_object()) fail("header is not a JSON object");
    SafetensorsHeader out;
    for (auto it = header.begin(); it != header.end(); ++it) {
      if (it.key() == kMetadataKey)
        read_metadata(it.value(), out.metadata);
      else
        out.entries.push_back(read_entry(it.key(), it.value()));
    }
    check_tiling(out.entries);
    return out;
  }

  [[noreturn]] void fail(const std::string& problem) const {
    throw DataError(path_ + ": " + problem + " (" + kLoadFix + ")");
  }

 private:
  void read_metadata(const nlohmann::json& value, std::map<std::string, std::string>& out) const {
    if (value.is_null()) return;
    if (!value.is_object()) fail("__metadata__ is not a JSON object of strings");
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (!it.value().is_string())
        fail("__metadata__[\"" + it.key() + "\"] is not a string (got " +
             it.value().type_name() + ")");
      out.emplace(it.key(), it.value().get<std::string>());
    }
  }

  /// A non-negative JSON integer, or fail naming `what`.
  uint64_t read_count(const nlohmann::json& value, const std::string& what) const {
    if (value.is_number_unsigned()) return value.get<uint64_t>();
    fail(what + " must be a non-negative integer, got " + value.dump());
  }

  /// The entry's shape, and its element count checked against the data section without overflow.
  void read_shape(const nlohmann::json& info, const std::string& where, const DtypeInfo& dtype,
                  SafetensorsEntry& entry) const {
    const auto shape_it = info.find("shape");
    if (shape_it == info.end() || !shape_it->is_array()) fail(where + "missing \"shape\" list");
    bool has_zero = false;
    for (const nlohmann::json& dim : *shape_it) {
      const uint64_t size = read_count(dim, where + "shape entry");
      if (size > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        fail(where + "shape entry " + std::to_string(size) + " is too large");
      entry.shape.push_back(static_cast<int64_t>(size));
      has_zero = has_zero || size == 0;
    }
    const uint64_t max_numel = data_size_ / static_cast<uint64_t>(dtype.itemsize);
    uint64_t numel = 1;
    if (has_zero) {
      numel = 0;
    } else {
      for (int64_t size : entry.shape) {
        if (numel > max_numel / static_cast<uint64_t>(size))
          fail(where + "shape " + shape_str(entry.shape) + " of " + dtype.code +
               " needs more bytes than the data section holds (" + std::to_string(data_size_) + ")");
        numel *= static_cast<uint64_t>(size);
      }
    }
    entry.numel = static_cast<int64_t>(numel);
  }

  SafetensorsEntry read_entry(const std::string& name, const nlohmann::json& info) const {
    const std::string where = "tensor \"" + name + "\": ";
    if (!info.is_object()) fail(where + "header entry is not an object");
    SafetensorsEntry entry;
    entry.name = name;

    const auto dtype_it = info.find("dtype");
    if (dtype_it == info.end() || !dtype_it->is_string()) fail(where + "missing \"dtype\" string");
    const DtypeInfo* dtype = find_dtype(dtype_it->get_ref<const std::string&>());
    if (!dtype)
      fail(where + "unsupported dtype " + dtype_it->dump() +
           " (supported: F32 F64 F16 BF16 I64 I32 I16 I8 U8 BOOL)");
    entry.dtype = dtype->code;
    read_shape(info, where, *dtype, entry);

    const auto offsets_it = info.find("data_offsets");
    if (offsets_it == info.end() || !offsets_it->is_array() || offsets_it->size() != 2)
      fail(where + "missing \"data_offsets\" [begin, end]");
    entry.begin = read_count((*offsets_it)[0], where + "data_offsets begin");
    entry.end = read_count((*offsets_it)[1], where + "data_offsets end");
    const std::string range =
        "data_offsets [" + std::to_string(entry.begin) + ", " + std::to_string(entry.end) + "]";
    if (entry.begin > entry.end || entry.end > data_size_)
      fail(where + range + " lie outside the data section of " + std::to_string(data_size_) +
           " bytes");
    const uint64_t expected = static_cast<uint64_t>(entry.numel) * static_cast<uint64_t>(dtype->itemsize);
    if (entry.end - entry.begin != expected)
      fail(where + range + " span " + std::to_string(entry.end - entry.begin) + " bytes but shape " +
           shape_str(entry.shape) + " of " + dtype->code + " needs " + std::to_string(expected));
    return entry;
  }

  /// The byte ranges must tile [0, data_size_) exactly, as the format requires.
  void check_tiling(const std::vector<SafetensorsEntry>& entries) const {
    std::vector<std::pair<uint64_t, uint64_t>> spans;
    spans.reserve(entries.size());
    for (const SafetensorsEntry& entry : entries) spans.emplace_back(entry.begin, entry.end);
    std::sort(spans.begin(), spans.end());
    uint64_t pos = 0;
    for (const auto& [begin, end] : spans) {
      if (begin != pos)
        fail("data section has a " + std::string(begin > pos ? "hole" : "overlap") + " at byte " +
             std::to_string(std::min(begin, pos)));
      pos = end;
    }
    if (pos != data_size_)
      fail("data section has " + std::to_string(data_size_ - pos) +
           " trailing bytes not owned by any tensor");
  }

  const std::string& path_;
  uint64_t data_size_ = 0;
};

/// A safetensors file open for reading: a regular file (read by offset, never whole).
class SafetensorsReader {
 public:
  explicit SafetensorsReader(const std::string& path) : path_(path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
      throw DataError(path + ": no such file (check the path; checkpoints are written by "
                             "`transnormer train` into the run directory)");
    if (std::filesystem::is_directory(path, ec))
      throw DataError(path + ": is a directory, expected a .safetensors file");
    fd_.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // a FIFO must not block the open
    if (fd_.fd < 0)
      throw DataError("cannot read " + path + ": " + std::strerror(errno) +
                      (errno == EACCES ? " (check the file's permissions)" : ""));
    struct stat st {};
    if (::fstat(fd_.fd, &st) != 0) throw DataError("cannot read " + path + ": " + std::strerror(errno));
    if (!S_ISREG(st.st_mode))
      throw DataError(path + ": is not a regular file (a device, pipe or socket); give the path of a "
                             ".safetensors file");
    size_ = static_cast<uint64_t>(st.st_size);
  }

  /// The header, checked against the file's size before anything is read or allocated.
  SafetensorsHeader header() const {
    const HeaderParser parser(path_, 0);
    if (size_ < 8)
      parser.fail("truncated: " + std::to_string(size_) + " bytes, too short for the 8-byte header length");
    uint64_t header_len = 0;
    read_exact(0, reinterpret_cast<char*>(&header_len), 8);
    if (header_len > size_ - 8)
      parser.fail("header length " + std::to_string(header_len) + " runs past the end of the file (" +
                  std::to_string(size_) + " bytes); the file is truncated or not safetensors");
    if (header_len > kMaxSafetensorsHeaderBytes)
      parser.fail("header length " + std::to_string(header_len) + " is over the format's limit of " +
                  std::to_string(kMaxSafetensorsHeaderBytes) + " bytes");
    std::string text(static_cast<size_t>(header_len), '\0');
    read_exact(8, text.data(), header_len);
    SafetensorsHeader out = HeaderParser(path_, size_ - 8 - header_len).parse(text.data(), text.data() + text.size());
    out.data_offset = 8 + header_len;
    return out;
  }

  /// The values of `entry` converted to f32, read from the file in pieces (F32 straight into the
  /// tensor), so no more than the tensor and one piece is ever held.
  Tensor tensor(const SafetensorsHeader& header, const SafetensorsEntry& entry) const {
    const DtypeInfo& dtype = *find_dtype(entry.dtype);
    Tensor out = Tensor::empty(entry.shape);
    const uint64_t offset = header.data_offset + entry.begin;
    if (dtype.dtype == Dtype::F32) {
      read_exact(offset, reinterpret_cast<char*>(out.data()), entry.end - entry.begin);
      return out;
    }
    constexpr int64_t kPiece = int64_t{1} << 18;  // values per read
    std::vector<char> piece(static_cast<size_t>(std::min<int64_t>(entry.numel, kPiece) * dtype.itemsize));
    for (int64_t done = 0; done < entry.numel; done += kPiece) {
      const int64_t count = std::min<int64_t>(kPiece, entry.numel - done);
      read_exact(offset + static_cast<uint64_t>(done * dtype.itemsize), piece.data(),
                 static_cast<uint64_t>(count * dtype.itemsize));
      convert_to_f32(dtype.dtype, piece.data(), count, out.data() + done);
    }
    return out;
  }

 private:
  /// Reads `bytes` at `offset`; a file that ends first (truncated meanwhile) is a DataError.
  void read_exact(uint64_t offset, char* dst, uint64_t bytes) const {
    while (bytes > 0) {
      const ssize_t n = ::pread(fd_.fd, dst, static_cast<size_t>(std::min<uint64_t>(bytes, uint64_t{1} << 30)),
                                static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw DataError("error while reading " + path_ + ": " + std::strerror(errno));
      if (n == 0)
        throw DataError(path_ + ": the file ended at byte " + std::to_string(offset) +
                        " while it was read (was it truncated meanwhile?); re-copy it");
      dst += n;
      offset += static_cast<uint64_t>(n);
      bytes -= static_cast<uint64_t>(n);
    }
  }

  /// The descriptor, closed however the reader ends (a throwing constructor included).
  struct Fd {
    int fd = -1;
    Fd() = default;
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() {
      if (fd >= 0) ::close(fd);
    }
  };

  const std::string& path_;
  Fd fd_;
  uint64_t size_ = 0;
};

}  // namespace

int64_t SafetensorsHeader::values() const {
  int64_t n = 0;
  for (const SafetensorsEntry& entry : entries) n += entry.numel;
  return n;
}

SafetensorsHeader read_safetensors_header(const std::string& path) { return SafetensorsReader(path).header(); }

SafetensorsFile load_safetensors(const std::string& path) {
  const SafetensorsReader reader(path);
  const SafetensorsHeader header = reader.header();
  std::vector<const SafetensorsEntry*> order;  // by offset: the file is read front to back
  for (const SafetensorsEntry& entry : header.entries) order.push_back(&entry);
  std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) { return a->begin < b->begin; });
  SafetensorsFile file;
  file.metadata = header.metadata;
  for (const SafetensorsEntry* entry : order) {
    file.tensors.emplace(entry->name, reader.tensor(header, *entry));
    file.dtypes.emplace(entry->name, entry->dtype);
  }
  return file;
}

void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  // ordered_json keeps insertion order: tensors by name (std::map order = byte order = Python's
  // sorted() on str), then __metadata__, exactly like the reference's dict.
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  uint64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    if (name == kMetadataKey)
      throw DataError(path + ": cannot save a tensor named \"__metadata__\" (the name is reserved "
                             "for the metadata map); rename the tensor");
    if (!tensor.defined())
      throw ShapeError("[save_safetensors] tensor \"" + name + "\" is undefined");
    const uint64_t bytes = static_cast<uint64_t>(tensor.numel()) * sizeof(float);
    nlohmann::ordered_json entry = nlohmann::ordered_json::object();
    entry["dtype"] = "F32";
    entry["shape"] = tensor.shape();
    entry["data_offsets"] = nlohmann::ordered_json::array({offset, offset + bytes});
    header[name] = std::move(entry);
    offset += bytes;
  }
  if (!metadata.empty()) {
    nlohmann::ordered_json meta = nlohmann::ordered_json::object();
    for (const auto& [key, value] : metadata) meta[key] = value;
    header[kMetadataKey] = std::move(meta);
  }

  std::string header_text;
  try {
    header_text = header.dump(-1, ' ', /*ensure_ascii=*/true);  // = json.dumps(separators=(",",":"))
  } catch (const nlohmann::json::exception& err) {
    throw DataError(path + ": cannot write safetensors header: a tensor name or metadata string "
                           "is not valid UTF-8 (" + err.what() + ")");
  }
  header_text.append((8 - header_text.size() % 8) % 8, ' ');

  std::string out;
  out.reserve(8 + header_text.size() + offset);
  const uint64_t header_len = header_text.size();
  out.append(reinterpret_cast<const char*>(&header_len), 8);
  out += header_text;
  for (const auto& [name, tensor] : tensors)
    if (tensor.numel() > 0)
      out.append(reinterpret_cast<const char*>(tensor.data()),
                 static_cast<size_t>(tensor.numel()) * sizeof(float));
  write_file_atomic(path, out);
}

}  // namespace tn
