#pragma once
// The language-model data of a run (design.md "Language-model data protocol"): reads the splits
// named in the spec's data: section under the data root, builds the word vocabulary from the
// training lines only, and encodes every split with it.
#include <string>
#include <vector>

#include "data/tokenizers/word_vocab.h"
#include "experiments/spec.h"

namespace tn {

struct LmData {
  WordVocab vocab;
  std::vector<int32_t> train, valid, test;  // id streams (valid/test empty when not configured)
  std::string train_file, valid_file, test_file;  // resolved paths, for summary.json
  int64_t train_lines = 0, valid_lines = 0;
};

/// Loads the splits of `spec` with relative paths taken from `data_root`. With
/// split_valid_from_train the held-out lines never reach the vocabulary. Throws DataError naming
/// the file (missing, unreadable) with the fix (set --data-root or TRANSNORMER_DATA).
LmData load_lm_data(const DataSpec& spec, const std::string& data_root);

}  // namespace tn
