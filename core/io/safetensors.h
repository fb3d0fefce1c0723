#pragma once
// safetensors checkpoints (https://github.com/huggingface/safetensors), read and written by hand
// exactly as the PyTorch reference (transnormer_ref.py) does:
//
//   [8 bytes] N, little-endian uint64         header length in bytes
//   [N bytes] JSON header                     {"name": {"dtype", "shape", "data_offsets": [b, e]},
//                                              ..., "__metadata__": {"key": "value", ...}}
//   [rest]    data section                    raw little-endian tensor bytes; [b, e) are byte
//                                              offsets relative to the start of this section
#include <map>
#include <string>

#include "core/tensor.h"

namespace tn {

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
/// Throws DataError naming the path, the problem (missing file, truncated, header length beyond
/// the file, bad JSON, unknown dtype, offsets outside the data section / overlapping / holes,
/// shape * dtype size != byte range, non-string metadata) and the fix. Never crashes on garbage.
SafetensorsFile load_safetensors(const std::string& path);

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
