#pragma once
// The examples of a sentence-level task encoded for the model: each text through the GPT-2 BPE
// and the dictionary, laid out as RoBERTa takes it (data/tokenizers/roberta_input.h).
#include <cstdint>
#include <string>
#include <vector>

#include "data/readers/reader.h"
#include "data/tokenizers/gpt2_codec.h"

namespace tn {

/// One split, encoded; vectors are parallel, one entry per example, in file order.
struct EncodedSentences {
  std::string name;  // the split's name ("valid", "dev_mismatched")
  SentenceSplit::Role role = SentenceSplit::Role::Train;
  std::string file;
  bool labelled = true;
  std::vector<std::vector<int32_t>> inputs;  // model ids, <s> … </s>
  std::vector<int64_t> lengths;              // inputs[i].size()
  std::vector<int32_t> labels;               // class, or -1
  std::vector<double> targets;               // regression target, or NaN
  std::vector<std::string> ids;              // the file's example ids
  int64_t truncated = 0;                     // examples cut to max_positions
  int64_t skipped = 0;                       // rows the reader dropped (SentenceSplit::skipped)
};

/// Encodes every split, cutting each example to max_positions tokens.
std::vector<EncodedSentences> encode_sentences(const std::vector<SentenceSplit>& splits, const Gpt2Codec& codec,
                                               int64_t max_positions);

}  // namespace tn
