#pragma once
// The `wikitext` reader's data section: WikiText-layout .tokens files (Merity et al. 2016), one
// line of whitespace-separated words each, read under the language-model data protocol
// (datasets/README.md; README "The quickstart's data protocol").
//
//   data: {reader: wikitext, train: wikitext-103/wiki.valid.tokens, valid: null,
//          test: wikitext-103/wiki.test.tokens, split_valid_from_train: 0.1, seq_len: 256,
//          tokenizer: word}
// The .raw files of WikiText-103-raw / WikiText-2-raw are read the same way, with
// `tokenizer: gpt2` (the masked_lm task: data/tokenizers/tokenizer_spec.h).
#include <memory>
#include <string>

#include "core/platform/config/json_section.h"
#include "data/readers/reader.h"
#include "data/tokenizers/tokenizer_spec.h"

namespace tn {

class WikitextSpec final : public DataSpec, public TextSource {
 public:
  /// Paths as written: relative ones are taken from the data root when read. "" = not given.
  std::string train, valid, test;       // train is required
  double split_valid_from_train = 0;    // [0, 1): hold out the last round(f * n_lines) lines; excludes `valid`
  int64_t seq_len = 256;               // tokens per training block (targets per block), >= 1
  TokenizerSpec tokenizer;              // word (default) or gpt2

  std::string reader() const override { return "wikitext"; }
  nlohmann::ordered_json to_json() const override;
  bool equals(const DataSpec& other) const override;
  int64_t tokens_per_sample() const override { return seq_len; }
  /// The splits' lines. With split_valid_from_train the held-out lines are the last ones of the
  /// training file. Throws DataError naming a missing or unreadable file with the fix.
  TextSplits read_text(const std::string& data_root) const override;
  TokenizerSpec text_tokenizer() const override { return tokenizer; }
};

/// Resolves the wikitext keys of a `data:` section (train required; valid and
/// split_valid_from_train exclusive). Throws ConfigIssue.
std::shared_ptr<const DataSpec> resolve_wikitext_spec(const JsonSection& section);

}  // namespace tn
