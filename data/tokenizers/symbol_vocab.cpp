#include "data/tokenizers/symbol_vocab.h"

#include <algorithm>

#include "core/error.h"

namespace tn {

namespace {
const char* const kSpecials[] = {"<pad>", "<unk>", "<eos>"};
}

SymbolVocab SymbolVocab::build(const std::unordered_map<std::string, int64_t>& counts, int64_t min_freq) {
  if (min_freq < 1) throw ShapeError("[SymbolVocab] min_freq " + std::to_string(min_freq));
  std::vector<std::pair<std::string, int64_t>> kept;
  for (const auto& [symbol, count] : counts)
    if (count >= min_freq && symbol != kSpecials[0] && symbol != kSpecials[1] && symbol != kSpecials[2])
      kept.emplace_back(symbol, count);
  // torchtext: sort by symbol, then a stable sort by descending count. UTF-8 byte order is
  // code-point order, so std::string's comparison gives Python's str order.
  std::sort(kept.begin(), kept.end());
  std::stable_sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> symbols(std::begin(kSpecials), std::end(kSpecials));
  for (auto& [symbol, count] : kept) symbols.push_back(std::move(symbol));
  return from_symbols(std::move(symbols));
}

SymbolVocab SymbolVocab::from_symbols(std::vector<std::string> symbols) {
  SymbolVocab v;
  for (int i = 0; i < 3; ++i)
    if (static_cast<int>(symbols.size()) <= i || symbols[i] != kSpecials[i])
      throw DataError("the symbol vocabulary does not start with <pad>, <unk>, <eos>");
  for (size_t i = 0; i < symbols.size(); ++i)
    if (!v.ids_.emplace(symbols[i], static_cast<int32_t>(i)).second)
      throw DataError("the symbol vocabulary lists \"" + symbols[i] + "\" twice");
  v.symbols_ = std::move(symbols);
  return v;
}

int32_t SymbolVocab::find(std::string_view symbol) const {
  const auto it = ids_.find(symbol);
  return it == ids_.end() ? -1 : it->second;
}

void split_code_points(std::string_view text, std::vector<std::string_view>& out) {
  out.clear();
  size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const size_t n = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    out.push_back(text.substr(i, n));
    i += n;
  }
}

void split_listops(std::string_view text, std::vector<std::string_view>& out) {
  out.clear();
  size_t i = 0;
  const auto separator = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '(' || c == ')'; };
  while (i < text.size()) {
    while (i < text.size() && separator(text[i])) ++i;
    const size_t start = i;
    while (i < text.size() && !separator(text[i])) ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
}

}  // namespace tn
