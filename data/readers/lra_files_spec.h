#pragma once
// What the LRA readers whose splits are three files in one folder (listops, aan) share: the
// files (data/readers/split_files.h), the longest sequence l_max in symbols with <eos>, and the
// symbol tokenizer. Each reader adds its name, label space and file parser:
//   data: {reader: listops, dir: lra/listops-1000, train: basic_train.tsv, valid: basic_val.tsv,
//          test: basic_test.tsv, max_length: 2048, tokenizer: {type: listops, min_freq: 1}}
#include <cstdint>
#include <memory>
#include <string>

#include "core/platform/config/json_section.h"
#include "data/readers/reader.h"
#include "data/readers/split_files.h"
#include "data/tokenizers/tokenizer_spec.h"

namespace tn {

class LraFilesSpec : public DataSpec, public SentenceSource {
 public:
  SplitFiles files;
  /// Symbols per sequence with the appended <eos> (l_max): longer inputs keep their first
  /// max_length - 1 symbols. For a pair (aan), per document. >= 2.
  int64_t max_length = 0;
  TokenizerSpec tokenizer;

  nlohmann::ordered_json to_json() const override;
  bool equals(const DataSpec& other) const override;
  int64_t tokens_per_sample() const override { return max_length; }
  std::string length_key() const override { return "max_length"; }
  /// train, valid, test (those configured) through read_split.
  std::vector<SentenceSplit> read_sentences(const std::string& data_root) const override;
  TokenizerSpec text_tokenizer() const override { return tokenizer; }
  std::string submission_name(const std::string&) const override { return ""; }
  /// The class's label name.
  std::string prediction_text(int32_t predicted_class, double) const override;

 protected:
  /// Parses one split file. Throws DataError naming the path or path:line.
  virtual SentenceSplit read_split(const std::string& path, const std::string& name,
                                   SentenceSplit::Role role) const = 0;
};

/// Fills `spec` from the section: the split files over `spec.files` (its defaults), max_length and
/// tokenizer over theirs; `extra_keys` are the reader's own keys, also allowed. Throws ConfigIssue.
void resolve_lra_files_spec(const JsonSection& s, LraFilesSpec& spec, const std::vector<std::string>& extra_keys = {});

}  // namespace tn
