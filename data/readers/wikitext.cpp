#include "data/readers/wikitext.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <sstream>
#include <string_view>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "data/text/utf8.h"

namespace tn {
namespace {

constexpr const char* kDataHint =
    "set --data-root or TRANSNORMER_DATA to the folder holding the datasets; "
    "`transnormer data fetch` downloads WikiText-103";

}  // namespace

std::vector<std::string> read_lines(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw DataError(path + ": no such file (" + kDataHint + ")");
  if (std::filesystem::is_directory(path, ec))
    throw DataError(path + ": is a directory, expected a text file such as wiki.valid.tokens (" +
                    kDataHint + ")");
  std::string text;
  try {
    text = read_file(path);
  } catch (const DataError& err) {
    throw DataError(std::string(err.what()) + " (" + kDataHint + ")");
  }
  if (const void* nul = std::memchr(text.data(), '\0', text.size()))
    throw DataError(path + ": contains a NUL byte at offset " +
                    std::to_string(static_cast<const char*>(nul) - text.data()) +
                    ", so it is not a text file (point the data path at the .tokens text file)");
  if (const size_t bad = invalid_utf8_at(text); bad != std::string_view::npos)
    throw DataError(path + ": is not valid UTF-8 text (bad byte at offset " + std::to_string(bad) +
                    "); convert it to UTF-8 or point the data path at the .tokens text file");

  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.emplace_back(text, start, end - start);
    start = end + 1;
  }
  return lines;
}

std::pair<std::vector<std::string>, std::vector<std::string>> split_valid_from_train(
    std::vector<std::string> lines, double frac) {
  const auto fail = [&](const std::string& problem) {
    std::ostringstream msg;
    msg << "data.split_valid_from_train = " << frac << " " << problem
        << " (use a fraction in (0, 1) that leaves lines on both sides, or 0 for none)";
    throw ConfigError(msg.str());
  };
  if (!std::isfinite(frac) || frac < 0.0 || frac >= 1.0) fail("is not in [0, 1)");
  if (frac == 0.0) return {std::move(lines), {}};
  const auto total = static_cast<int64_t>(lines.size());
  const auto n_valid = static_cast<int64_t>(std::floor(frac * static_cast<double>(total) + 0.5));
  if (n_valid <= 0 || n_valid >= total)
    fail("holds out " + std::to_string(n_valid) + " of " + std::to_string(total) + " lines");
  std::vector<std::string> valid(std::make_move_iterator(lines.end() - n_valid),
                                 std::make_move_iterator(lines.end()));
  lines.resize(static_cast<size_t>(total - n_valid));
  return {std::move(lines), std::move(valid)};
}

}  // namespace tn
