#include "data/tokenizers/word_vocab.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "core/error.h"

namespace tn {
namespace {

constexpr std::string_view kSpecials[] = {"<pad>", "<eos>", "<unk>"};

bool is_ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/// Calls fn(word) for each ASCII-whitespace-separated word of `line` (reference words_of_lines,
/// without the trailing <eos>).
template <typename Fn>
void for_each_word(std::string_view line, Fn&& fn) {
  size_t pos = 0;
  while (pos < line.size()) {
    while (pos < line.size() && is_ascii_space(line[pos])) ++pos;
    const size_t start = pos;
    while (pos < line.size() && !is_ascii_space(line[pos])) ++pos;
    if (pos > start) fn(line.substr(start, pos - start));
  }
}

bool is_special(std::string_view word) {
  return std::find(std::begin(kSpecials), std::end(kSpecials), word) != std::end(kSpecials);
}

}  // namespace

WordVocab::WordVocab(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {
  if (tokens_.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
    throw DataError("vocabulary has " + std::to_string(tokens_.size()) +
                    " tokens, more than int32 ids can address");
  index_.reserve(tokens_.size());
  for (size_t i = 0; i < tokens_.size(); ++i)
    if (!index_.emplace(tokens_[i], static_cast<int32_t>(i)).second)
      throw DataError("vocabulary token \"" + tokens_[i] + "\" repeats (ids " +
                      std::to_string(index_.find(tokens_[i])->second) + " and " +
                      std::to_string(i) + "); the stored vocabulary is corrupt, re-create it");
}

WordVocab WordVocab::build(const std::vector<std::string>& lines) {
  // Words in first-appearance order with their counts; stable sort by count keeps that order on
  // ties (reference: sorted(counts, key=(-count, first_index))).
  struct Counted {
    std::string_view word;
    int64_t count;
  };
  std::vector<Counted> words;
  std::unordered_map<std::string_view, size_t> slot;
  for (const std::string& line : lines)
    for_each_word(line, [&](std::string_view word) {
      if (is_special(word)) return;
      const auto [it, inserted] = slot.emplace(word, words.size());
      if (inserted)
        words.push_back({word, 1});
      else
        ++words[it->second].count;
    });
  std::stable_sort(words.begin(), words.end(),
                   [](const Counted& a, const Counted& b) { return a.count > b.count; });

  std::vector<std::string> tokens(std::begin(kSpecials), std::end(kSpecials));
  tokens.reserve(tokens.size() + words.size());
  for (const Counted& counted : words) tokens.emplace_back(counted.word);
  return WordVocab(std::move(tokens));
}

WordVocab WordVocab::from_tokens(std::vector<std::string> tokens) {
  for (size_t i = 0; i < std::size(kSpecials); ++i)
    if (i >= tokens.size() || tokens[i] != kSpecials[i])
      throw DataError("vocabulary must start with <pad>, <eos>, <unk> (ids 0, 1, 2) but id " +
                      std::to_string(i) + " is " +
                      (i < tokens.size() ? "\"" + tokens[i] + "\"" : std::string("missing")) +
                      "; the stored vocabulary (e.g. a checkpoint's transnormer.vocab) is not a "
                      "word vocabulary of this protocol");
  return WordVocab(std::move(tokens));
}

int32_t WordVocab::id(std::string_view word) const {
  const auto it = index_.find(word);
  return it == index_.end() ? kUnk : it->second;
}

std::vector<int32_t> WordVocab::encode(const std::vector<std::string>& lines) const {
  std::vector<int32_t> ids;
  for (const std::string& line : lines) {
    for_each_word(line, [&](std::string_view word) { ids.push_back(id(word)); });
    ids.push_back(kEos);
  }
  return ids;
}

}  // namespace tn
