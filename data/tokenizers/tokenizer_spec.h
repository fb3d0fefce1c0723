#pragma once
// How a reader's text becomes ids: the `data.tokenizer` key shared by the text readers
// (wikitext, glue).
//   tokenizer: word                                  words and a vocabulary built from train
//   tokenizer: gpt2                                  GPT-2 byte-level BPE + fairseq's dict.txt
//   tokenizer: {type: gpt2, bpe_dir: gpt2_bpe, dict: gpt2_bpe/dict.txt}
// Paths are relative to the data root, like the readers' own files.
#include <nlohmann/json.hpp>
#include <string>

#include "core/config/json_section.h"

namespace tn {

struct TokenizerSpec {
  enum class Kind { Word, Gpt2 };
  Kind kind = Kind::Word;
  std::string bpe_dir = "gpt2_bpe";         // encoder.json and vocab.bpe
  std::string dict = "gpt2_bpe/dict.txt";   // fairseq dictionary: the model's ids

  /// "word", or {type: gpt2, bpe_dir, dict}; resolving it again gives an equal spec.
  nlohmann::ordered_json to_json() const;
  bool operator==(const TokenizerSpec&) const = default;
};

/// Reads `key` of a data section: absent → `fallback`; a name ("word", "gpt2"); or a mapping
/// with `type` and, for gpt2, `bpe_dir` and `dict`. Throws ConfigIssue naming the key and the
/// choices.
TokenizerSpec resolve_tokenizer(const JsonSection& data, const std::string& key, const TokenizerSpec& fallback);

}  // namespace tn
