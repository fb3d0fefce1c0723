#pragma once
// The reader walkthrough's example spec (docs/architecture.md, "Add a reader", step 1): the
// `labelled_lines` reader, labelled texts at the character level, from a folder of train.tsv,
// valid.tsv and test.tsv (labelled_lines.h):
//   data: {reader: labelled_lines, path: DIR, labels: [neg, pos], max_length: 64,
//          tokenizer: {type: char, min_freq: 1}}
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/platform/config/json_section.h"
#include "data/readers/reader.h"
#include "data/tokenizers/tokenizer_spec.h"

namespace tn::walkthrough {

class LabelledLinesSpec final : public DataSpec, public SentenceSource {
 public:
  std::string path;                        // the folder, relative to the data root
  std::vector<std::string> labels;         // class k's label text; at least two
  int64_t max_length = 64;                 // characters with <eos>
  TokenizerSpec tokenizer;                 // char

  LabelledLinesSpec();
  std::string reader() const override { return "labelled_lines"; }
  nlohmann::ordered_json to_json() const override;
  bool equals(const DataSpec& other) const override;
  int64_t tokens_per_sample() const override { return max_length; }
  std::string length_key() const override { return "max_length"; }
  std::string dataset_name() const override { return "labelled lines"; }
  bool pairs() const override { return false; }
  SentenceTarget target() const override;
  /// train, valid, test from PATH/{train,valid,test}.tsv. Throws as read_labelled_lines.
  std::vector<SentenceSplit> read_sentences(const std::string& data_root) const override;
  TokenizerSpec text_tokenizer() const override { return tokenizer; }
  std::string submission_name(const std::string&) const override { return ""; }
  std::string prediction_text(int32_t predicted_class, double) const override { return labels.at(predicted_class); }
};

/// Resolves a `data:` section with reader labelled_lines. Throws ConfigIssue at the key with the fix.
std::shared_ptr<const DataSpec> resolve_labelled_lines_spec(const JsonSection& section);

}  // namespace tn::walkthrough
