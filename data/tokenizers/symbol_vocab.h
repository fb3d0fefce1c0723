#pragma once
// The symbol vocabularies of the LRA token tasks (the official code's torchtext
// build_vocab_from_iterator, as OpenNLPLab/lra and S4 call it): specials <pad> = 0, <unk> = 1,
// <eos> = 2, then every symbol seen at least min_freq times in the training split, by descending
// count, ties in ascending code-point order. A symbol is a Unicode character (LRA Text and
// Retrieval) or a ListOps token.
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tn {

class SymbolVocab {
 public:
  static constexpr int32_t kPad = 0, kUnk = 1, kEos = 2;

  /// Builds the vocabulary from symbol counts. min_freq >= 1. Throws ShapeError otherwise.
  static SymbolVocab build(const std::unordered_map<std::string, int64_t>& counts, int64_t min_freq);
  /// A vocabulary as saved (symbols(), specials first). Throws DataError when the specials are not
  /// the first three entries or a symbol repeats.
  static SymbolVocab from_symbols(std::vector<std::string> symbols);

  /// The id of `symbol`, or -1 when it is not in the vocabulary.
  int32_t find(std::string_view symbol) const;
  /// The id of `symbol`, <unk> when it is not in the vocabulary.
  int32_t id(std::string_view symbol) const {
    const int32_t i = find(symbol);
    return i < 0 ? kUnk : i;
  }
  const std::vector<std::string>& symbols() const { return symbols_; }
  int64_t size() const { return static_cast<int64_t>(symbols_.size()); }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> symbols_;
  std::unordered_map<std::string, int32_t, Hash, std::equal_to<>> ids_;
};

/// The symbols of a text under a symbol tokenizer, as views into `text` (out is replaced).
/// split_code_points: one symbol per Unicode code point (the official loaders' `list(text)` on a
/// Python str); `text` must be well-formed UTF-8 (data/text/utf8.h checks it first).
void split_code_points(std::string_view text, std::vector<std::string_view>& out);
/// split_listops: the official ListOps tokenizer: `(` and `)` dropped, then split on whitespace;
/// `]` stays a symbol of its own.
void split_listops(std::string_view text, std::vector<std::string_view>& out);

}  // namespace tn
