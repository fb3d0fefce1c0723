#pragma once
// safetensors checkpoints (https://github.com/huggingface/safetensors), read and written by hand
// exactly as the PyTorch reference (transnormer_ref.py) does:
//
//   [8 bytes] N, little-endian uint64         header length in bytes
//   [N bytes] JSON header                     {"name": {"dtype", "shape", "data_offsets": [b, e]},
//                                              ..., "__metadata__": {"key": "value", ...}}
//   [rest]    data section                    raw little-endian tensor bytes; [b, e) are byte
//                                              offsets relative to the start of this section
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/runtime/tensor.h"

namespace tn {

/// The largest header a file may have: 100,000,000 bytes, the limit of the format's reference
/// implementation (safetensors' MAX_HEADER_SIZE). A header length beyond it, or beyond the file,
/// is refused before anything is allocated.
constexpr uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

/// One tensor as a header lists it: its stored dtype ("F32", "BF16", ...), shape, element count
/// and byte range [begin, end) in the data section, all checked against the file's size.
struct SafetensorsEntry {
  std::string name;
  std::string dtype;
  Shape shape;
  int64_t numel = 0;
  uint64_t begin = 0, end = 0;
};

/// A safetensors header, read without the tensors' data: what a loader compares a stored config
/// with before it allocates anything the config sizes.
struct SafetensorsHeader {
  std::vector<SafetensorsEntry> entries;  // in the header's order
  std::map<std::string, std::string> metadata;
  uint64_t data_offset = 0;  // the data section's first byte in the file: 8 + header length
  /// The values all tensors hold together (at most the data section's bytes).
  int64_t values() const;
};

/// The contents of one safetensors file: tensors by name (always fp32 here) and the string map
/// stored under `__metadata__` (empty when the file has none). A checkpoint's metadata holds
/// "transnormer.config" (the resolved model section as JSON) and optionally "transnormer.vocab"
/// (a JSON list of tokens, index = id).
struct SafetensorsFile {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> metadata;
  std::map<std::string, std::string> dtypes;  // each tensor's stored dtype ("F32", "I32", ...)
};

/// Reads a safetensors file (8-byte LE header length, JSON header, raw LE data). Accepts F32, F64,
/// F16, BF16 (converted to f32) and I64/I32/I16/I8/U8/BOOL (converted to f32; BOOL -> 0 or 1;
/// integers beyond 2^24 round to the nearest float). A tensor with shape [] is a scalar (1 value).
/// Validation follows the reference's load_safetensors: the header is a JSON object of
/// {dtype, shape, data_offsets} entries, each byte range equals numel(shape) * itemsize(dtype),
/// and the ranges tile the data section exactly (no holes, overlaps or trailing bytes).
/// Throws DataError naming the path, the problem (missing file, not a regular file, truncated,
/// header length beyond the file or over kMaxSafetensorsHeaderBytes, bad JSON, unknown dtype,
/// offsets outside the data section / overlapping / holes, shape * dtype size != byte range,
/// non-string metadata) and the fix. Never crashes on garbage. The header is validated against the
/// file's size first; then each tensor is read from the file into its own buffer (never the whole
/// file at once), so the memory used is the tensors' f32 values.
SafetensorsFile load_safetensors(const std::string& path);

/// Reads and validates only the header of the safetensors file at `path` (as load_safetensors
/// does, with the same DataErrors), reading 8 + header length bytes and no tensor data.
SafetensorsHeader read_safetensors_header(const std::string& path);

/// Writes fp32 `tensors` as F32 in name (byte) order with data_offsets relative to the data
/// section, the header JSON compact (no spaces), non-ASCII escaped as \uXXXX, padded with spaces
/// to a multiple of 8 bytes, and `__metadata__` (the string map; left out when empty) last. The
/// output is byte-identical to the reference's save_safetensors for the same tensors and metadata
/// (metadata keys in sorted order). Written atomically via write_file_atomic.
/// Throws IoError naming the path on I/O failure (write_file_atomic), DataError when a name or
/// metadata string cannot be written (not valid UTF-8, or "__metadata__"); ShapeError when a tensor
/// is undefined.
void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata);

}  // namespace tn
