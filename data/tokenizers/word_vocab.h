#pragma once
// Word-level vocabulary of the language-model data protocol (datasets/README.md; the PyTorch
// reference's build_vocab / encode_words / words_of_lines).
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tn {

/// Token strings and their ids (id = index in tokens()). Ids 0..2 are always <pad>, <eos>, <unk>.
class WordVocab {
 public:
  static constexpr int32_t kPad = 0, kEos = 1, kUnk = 2;

  /// Builds from training lines: <pad>,<eos>,<unk>, then words by count desc, ties by first
  /// appearance; words spelled like a special map to it. Words are the lines' ASCII-whitespace
  /// ([ \t\n\r\f\v]+) separated pieces; held-out lines must not be passed here.
  static WordVocab build(const std::vector<std::string>& lines);
  /// From a stored token list (id = index), e.g. a checkpoint's "transnormer.vocab". Throws
  /// DataError if the first three are not the specials or a token repeats.
  static WordVocab from_tokens(std::vector<std::string> tokens);

  /// The id of `word`; kUnk for out-of-vocabulary words.
  int32_t id(std::string_view word) const;
  /// All tokens, index = id.
  const std::vector<std::string>& tokens() const { return tokens_; }
  /// Number of tokens including the three specials.
  int64_t size() const { return static_cast<int64_t>(tokens_.size()); }
  /// The protocol's id stream: each line's ASCII-whitespace-separated words then <eos> (a blank
  /// line is a lone <eos>), so the stream has (words + lines) ids.
  std::vector<int32_t> encode(const std::vector<std::string>& lines) const;

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };
  explicit WordVocab(std::vector<std::string> tokens);

  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int32_t, Hash, std::equal_to<>> index_;
};

}  // namespace tn
