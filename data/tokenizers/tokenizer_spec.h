#pragma once
// How a reader's text becomes ids: the `data.tokenizer` key shared by the text readers
// (wikitext, glue, and LRA's listops, imdb, aan).
//   tokenizer: word                                  words and a vocabulary built from train
//   tokenizer: gpt2                                  GPT-2 byte-level BPE + fairseq's dict.txt
//   tokenizer: {type: gpt2, bpe_dir: gpt2_bpe, dict: gpt2_bpe/dict.txt}
//   tokenizer: {type: char, min_freq: 15}            Unicode code points (LRA Text, Retrieval)
//   tokenizer: {type: listops, min_freq: 1}          ListOps symbols, parentheses dropped
// char and listops build a symbol vocabulary from the training split (data/tokenizers/symbol_vocab.h).
// Paths are relative to the data root, like the readers' own files.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/platform/config/json_section.h"

namespace tn {

struct TokenizerSpec {
  enum class Kind { Word, Gpt2, Char, ListOps };
  Kind kind = Kind::Word;
  int64_t min_freq = 1;                     // char, listops: symbols seen fewer times in train are <unk>
  std::string bpe_dir = "gpt2_bpe";         // encoder.json and vocab.bpe
  std::string dict = "gpt2_bpe/dict.txt";   // fairseq dictionary: the model's ids

  /// "word", or {type: gpt2, bpe_dir, dict}; resolving it again gives an equal spec.
  nlohmann::ordered_json to_json() const;
  bool operator==(const TokenizerSpec&) const = default;
};

/// Reads `key` of a data section: absent → `fallback`; a name ("word", "gpt2", "char",
/// "listops"); or a mapping with `type` and, for gpt2, `bpe_dir` and `dict`, for char and listops
/// `min_freq` (>= 1). Throws ConfigIssue naming the key and the
/// choices.
TokenizerSpec resolve_tokenizer(const JsonSection& data, const std::string& key, const TokenizerSpec& fallback);

}  // namespace tn
