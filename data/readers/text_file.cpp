#include "data/readers/text_file.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "data/text/utf8.h"

namespace tn {

namespace {
constexpr std::string_view kBom = "\xEF\xBB\xBF";
}

std::string read_text_file(const std::string& path, const std::string& what, const std::string& hint) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw DataError(path + ": no such file (" + what + "; " + hint + ")");
  if (std::filesystem::is_directory(path, ec))
    throw DataError(path + ": is a directory, expected " + what + " (" + hint + ")");
  std::string text;
  try {
    text = read_file(path);
  } catch (const DataError& err) {
    throw DataError(std::string(err.what()) + " (" + hint + ")");
  }
  if (text.empty()) throw DataError(path + ": is empty, expected " + what + " (fetch it again; " + hint + ")");
  if (const void* nul = std::memchr(text.data(), '\0', text.size())) {
    const auto [line, column] = line_column(text, static_cast<size_t>(static_cast<const char*>(nul) - text.data()));
    throw DataError(at_line(path, line) + ": contains a NUL byte (column " + std::to_string(column) +
                    "), so it is not " + what + " (" + hint + ")");
  }
  if (const size_t bad = invalid_utf8_at(text); bad != std::string_view::npos) {
    const auto [line, column] = line_column(text, bad);
    throw DataError(at_line(path, line) + ": is not valid UTF-8 (bad byte at column " + std::to_string(column) +
                    "); the file should be UTF-8 text: convert it or fetch it again");
  }
  return text;
}

void for_each_line(std::string_view text, const std::function<void(int64_t, std::string_view)>& row) {
  int64_t line_no = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (line_no == 1 && line.starts_with(kBom)) line.remove_prefix(kBom.size());
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    row(line_no, line);
  }
}

std::vector<std::string_view> split_tabs(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    const size_t tab = line.find('\t', start);
    if (tab == std::string_view::npos) {
      fields.push_back(line.substr(start));
      return fields;
    }
    fields.push_back(line.substr(start, tab - start));
    start = tab + 1;
  }
}

std::pair<int64_t, int64_t> line_column(std::string_view text, size_t offset) {
  const auto before = text.substr(0, offset);
  const int64_t line = 1 + std::count(before.begin(), before.end(), '\n');
  const size_t line_start = before.rfind('\n');
  const size_t in_line = line_start == std::string_view::npos ? offset : offset - line_start - 1;
  return {line, static_cast<int64_t>(in_line) + 1};
}

}  // namespace tn
