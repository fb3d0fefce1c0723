#pragma once
// Reading a dataset's text file (GLUE and LRA .tsv files): the checks every reader makes before it
// parses rows, with messages naming the file or file:line, and the line and field splitting of
// tab-separated files with no quote handling.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tn {

/// The whole of a text file. `what` names what the file should be ("a GLUE SST-2 train file") and
/// `hint` how to get it; both go into the messages. Throws DataError naming the path when the file
/// is missing, a directory, unreadable or empty; naming path:line for a NUL byte or invalid UTF-8.
std::string read_text_file(const std::string& path, const std::string& what, const std::string& hint);

/// Calls `row(line_no, line)` for each '\n'-separated line of `text` (1-based numbers), with a
/// trailing '\r' and, on the first line, a UTF-8 byte-order mark removed. A final empty line after
/// the last '\n' is not a row.
void for_each_line(std::string_view text, const std::function<void(int64_t, std::string_view)>& row);

/// The fields of a line split on every '\t' (no quoting): "a\tb\t" gives {"a", "b", ""}.
std::vector<std::string_view> split_tabs(std::string_view line);

/// 1-based line and column of byte `offset` in `text`.
std::pair<int64_t, int64_t> line_column(std::string_view text, size_t offset);

/// "path:line" for messages.
inline std::string at_line(const std::string& path, int64_t line) { return path + ":" + std::to_string(line); }

}  // namespace tn
