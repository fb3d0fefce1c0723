#pragma once
// The masked-LM data of a run: the reader's text splits, each line stripped and BPE-encoded as
// fairseq preprocesses WikiText-103-raw for RoBERTa (multiprocessing_bpe_encoder: strip, skip
// empty lines; fairseq-preprocess: the dictionary's ids, </s> after every line), then packed into
// complete-mode samples (data/batching/complete_samples.h).
#include <cstdint>
#include <string>
#include <vector>

#include "data/batching/complete_samples.h"
#include "data/readers/reader.h"
#include "data/tokenizers/gpt2_codec.h"

namespace tn {

struct MlmData {
  PackedSamples train, valid, test;  // valid/test empty when not configured
  std::string train_file, valid_file, test_file;
  int64_t train_lines = 0, valid_lines = 0, test_lines = 0;  // non-empty lines encoded
  int64_t train_tokens = 0;                                  // ids of the training lines, </s> included
};

/// A line as the BPE encoder sees it: leading and trailing whitespace removed (ASCII whitespace;
/// Python's str.strip would also remove Unicode spaces such as U+00A0 at the ends).
std::string_view strip_line(std::string_view line);

/// Encodes and packs the three splits with `codec` into samples of at most tokens_per_sample
/// tokens. Throws DataError naming the file when a configured split has no non-empty line.
MlmData encode_mlm_data(const TextSplits& splits, const Gpt2Codec& codec, int64_t tokens_per_sample);

}  // namespace tn
