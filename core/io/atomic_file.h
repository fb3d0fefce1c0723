#pragma once
// Atomic file writes: write to "<path>.tmp.<pid>", flush, then rename over <path>, so a crash never
// leaves a half-written checkpoint or metrics file.
#include <string>
#include <string_view>

namespace tn {

/// Writes `bytes` to `path` atomically (a failed write leaves no temporary file behind). Throws
/// IoError naming the path on any I/O failure (cannot create, write, flush or rename).
void write_file_atomic(const std::string& path, std::string_view bytes);

/// Reads a whole file. Throws DataError naming the path when it is missing or unreadable.
std::string read_file(const std::string& path);

}  // namespace tn
