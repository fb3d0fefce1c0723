#pragma once
// The language-model data of a run (README "The quickstart's data protocol"; datasets/README.md):
// the reader's text splits, the word vocabulary built from the training lines only, and every
// split encoded with it into one id stream (each line's words, then <eos>).
#include <cstdint>
#include <string>
#include <vector>

#include "data/readers/reader.h"
#include "data/tokenizers/word_vocab.h"

namespace tn {

struct LmData {
  WordVocab vocab;
  std::vector<int32_t> train, valid, test;  // id streams (valid/test empty when not configured)
  std::string train_file, valid_file, test_file;  // where each came from, for summary.json
  int64_t train_lines = 0, valid_lines = 0, test_lines = 0;
};

/// Builds the vocabulary from `splits.train` and encodes the three splits. Held-out validation
/// lines (split_valid_from_train) never reach the vocabulary, since the reader already removed
/// them from the training lines.
LmData encode_lm_data(const TextSplits& splits);

}  // namespace tn
