#include "data/tokenizers/fairseq_dict.h"

#include <charconv>
#include <filesystem>
#include <string_view>
#include <unordered_map>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "core/platform/io/own_files.h"

namespace tn {
namespace {

constexpr const char* kFixHint =
    "use the dict.txt of the same GPT-2 BPE (`transnormer data fetch` fetches it into <data root>/gpt2_bpe/)";

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (const char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

/// The first 60 bytes of a line, quoted, for error messages.
std::string shown(std::string_view line) {
  std::string s(line.substr(0, 60));
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20) c = '?';
  return "\"" + s + (line.size() > 60 ? "...\"" : "\"");
}

}  // namespace

FairseqDict FairseqDict::load(const std::string& path, const Gpt2Bpe& bpe) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(st)) {
    const bool loop = ec == std::errc::too_many_symbolic_link_levels;
    throw DataError(path + (loop ? ": a loop of symbolic links" : ": no such file") + " (" + kFixHint + ")");
  }
  if (const std::string kind = non_regular_kind(path, /*follow_links=*/true); !kind.empty())
    throw DataError(path + ": is " + kind + ", not a dictionary file (" + kFixHint + ")");
  const std::string text = read_file(path);

  FairseqDict dict;
  dict.path_ = path;
  dict.bpe_of_ = {-1, -1, -1, -1};  // <s> <pad> </s> <unk>
  dict.index_of_bpe_.assign(static_cast<size_t>(bpe.size()), kUnk);
  std::unordered_map<std::string_view, size_t> line_of;  // symbol → its line
  const auto fail = [&](size_t line, const std::string& problem) {
    return DataError(path + ":" + std::to_string(line) + ": " + problem + " (" + kFixHint + ")");
  };
  size_t start = 0, line = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view row(text.data() + start, end - start);
    start = end + 1;
    ++line;
    const size_t space = row.rfind(' ');
    if (space == std::string_view::npos || space == 0 || !all_digits(row.substr(space + 1)))
      throw fail(line, "expected \"SYMBOL COUNT\" with a non-negative integer count, found " + shown(row));
    const std::string_view symbol = row.substr(0, space);
    if (const auto [it, added] = line_of.emplace(symbol, line); !added)
      throw fail(line, "the symbol " + shown(symbol) + " repeats line " + std::to_string(it->second));
    const auto model_id = static_cast<int32_t>(dict.bpe_of_.size());
    if (symbol.starts_with("madeupword") && symbol.size() > 10 && all_digits(symbol.substr(10))) {
      dict.bpe_of_.push_back(-1);
    } else {
      int64_t id = -1;
      const bool canonical = all_digits(symbol) && (symbol.size() == 1 || symbol[0] != '0') && symbol.size() <= 10;
      if (canonical) std::from_chars(symbol.data(), symbol.data() + symbol.size(), id);
      if (!canonical || id >= bpe.size())
        throw fail(line, "the symbol " + shown(symbol) + " is neither a GPT-2 id (0.." +
                             std::to_string(bpe.size() - 1) + " in decimal) nor a madeupwordNNNN filler");
      dict.bpe_of_.push_back(static_cast<int32_t>(id));
      dict.index_of_bpe_[static_cast<size_t>(id)] = model_id;
    }
    dict.file_symbols_.emplace_back(symbol);
  }
  int64_t missing = 0, first_missing = -1;
  for (size_t id = 0; id < dict.index_of_bpe_.size(); ++id)
    if (dict.index_of_bpe_[id] == kUnk) {
      if (missing++ == 0) first_missing = static_cast<int64_t>(id);
    }
  if (missing > 0)
    throw DataError(path + ": does not match the GPT-2 vocabulary of " + std::to_string(bpe.size()) + " tokens: " +
                    std::to_string(missing) + " GPT-2 id" + (missing == 1 ? " is" : "s are") +
                    " missing from it, the first " + std::to_string(first_missing) + " (" +
                    shown(bpe.token(static_cast<int32_t>(first_missing))) + "); " + kFixHint);
  dict.bpe_of_.push_back(-1);  // <mask>
  return dict;
}

int32_t FairseqDict::index_of_bpe(int32_t gpt2_id) const {
  if (gpt2_id < 0 || static_cast<size_t>(gpt2_id) >= index_of_bpe_.size()) return kUnk;
  return index_of_bpe_[static_cast<size_t>(gpt2_id)];
}

int32_t FairseqDict::bpe_of(int32_t model_id) const {
  if (model_id < 0 || model_id >= size())
    throw DataError(path_ + ": model id " + std::to_string(model_id) + " is outside 0.." +
                    std::to_string(size() - 1) + " of this dictionary");
  return bpe_of_[static_cast<size_t>(model_id)];
}

std::vector<std::string> FairseqDict::symbols() const {
  std::vector<std::string> all = {"<s>", "<pad>", "</s>", "<unk>"};
  all.insert(all.end(), file_symbols_.begin(), file_symbols_.end());
  all.emplace_back("<mask>");
  return all;
}

}  // namespace tn
