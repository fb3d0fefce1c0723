#pragma once
// The `imdb` reader: LRA Text, binary sentiment of IMDB movie reviews at the character level
// (Tay et al. 2021; the paper, §3.3; data/readers/imdb.h reads the reviews).
//   data: {reader: imdb, path: lra/imdb, valid: holdout, valid_fraction: 0.1, test: true,
//          max_length: 4096, tokenizer: {type: char, min_freq: 15}}
// valid: the validation split. `test` is the official LRA convention (the official code validates
// on the 25,000 test reviews, so model selection sees the test set); `holdout` keeps a fixed
// valid_fraction of the training reviews apart (the same ones for every run: the first
// round(f·n) of epoch_order(n, 0, 0)), for honest model selection; null: none.
#include <cstdint>
#include <memory>
#include <string>

#include "core/platform/config/json_section.h"
#include "data/readers/reader.h"
#include "data/tokenizers/tokenizer_spec.h"

namespace tn {

class ImdbSpec final : public DataSpec, public SentenceSource {
 public:
  enum class Valid { None, Test, Holdout };
  std::string path = "lra/imdb";  // archive, folder of archives, or aclImdb/; relative to the data root
  Valid valid = Valid::Holdout;
  double valid_fraction = 0.1;    // holdout: (0, 1)
  bool test = true;               // evaluate the test reviews
  int64_t max_length = 4096;      // characters with <eos>: the first 4095 are kept
  TokenizerSpec tokenizer;        // char, min_freq 15

  ImdbSpec();
  std::string reader() const override { return "imdb"; }
  nlohmann::ordered_json to_json() const override;
  bool equals(const DataSpec& other) const override;
  int64_t tokens_per_sample() const override { return max_length; }
  std::string length_key() const override { return "max_length"; }
  std::string dataset_name() const override { return "IMDB"; }
  bool pairs() const override { return false; }
  /// 2 classes neg, pos; accuracy.
  SentenceTarget target() const override;
  /// train (less the holdout), valid (holdout, or the test reviews), test. Throws as read_imdb.
  std::vector<SentenceSplit> read_sentences(const std::string& data_root) const override;
  TokenizerSpec text_tokenizer() const override { return tokenizer; }
  std::string submission_name(const std::string&) const override { return ""; }
  std::string prediction_text(int32_t predicted_class, double) const override {
    return predicted_class == 1 ? "pos" : "neg";
  }
};

/// Resolves a `data:` section with reader imdb. Throws ConfigIssue at the key with the fix.
std::shared_ptr<const DataSpec> resolve_imdb_spec(const JsonSection& section);

}  // namespace tn
