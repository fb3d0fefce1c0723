#pragma once
// What a dataset reader is: a typed `data:` section (DataSpec), resolved and validated from the
// spec by the reader registry (data/readers/registry.h), that knows how to read its files. What
// a reader yields depends on the data's kind; a task asks for the kind it consumes (TextSource
// for running text) and refuses a reader that yields another.
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "data/tokenizers/tokenizer_spec.h"

namespace tn {

/// A reader's resolved `data:` section. Immutable once resolved; compared and written back as
/// the run's config.yaml.
class DataSpec {
 public:
  virtual ~DataSpec() = default;
  /// The registry name of the reader ("wikitext"), the value of `data.reader`.
  virtual std::string reader() const = 0;
  /// The resolved section with every default filled in, `reader` first; resolving it again
  /// gives an equal spec.
  virtual nlohmann::ordered_json to_json() const = 0;
  /// Same reader and same resolved values.
  virtual bool equals(const DataSpec& other) const = 0;
  /// Tokens per sample: the longest sequence the model is given (`data.seq_len`).
  virtual int64_t tokens_per_sample() const = 0;
};

/// Running text split into lines, as a language-model task reads it.
struct TextSplits {
  std::vector<std::string> train, valid, test;  // lines; valid/test empty when not configured
  /// Where each split came from (paths, or "FILE (last N lines)"), for summary.json; "" = none.
  std::string train_file, valid_file, test_file;
};

/// A reader that yields running text (WikiText).
class TextSource {
 public:
  virtual ~TextSource() = default;
  /// Reads the configured splits, relative paths taken from `data_root`. Throws DataError naming
  /// the file (missing, unreadable, not text) with the fix; ConfigError for a split setting that
  /// the data cannot satisfy.
  virtual TextSplits read_text(const std::string& data_root) const = 0;
  /// How the text is to be tokenized (`data.tokenizer`): words, or GPT-2 BPE.
  virtual TokenizerSpec text_tokenizer() const = 0;
};

}  // namespace tn
