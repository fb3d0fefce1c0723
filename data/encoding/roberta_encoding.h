#pragma once
// The RoBERTa input encoding of sentence-level tasks (GLUE): each text through the GPT-2 BPE and
// fairseq's dictionary, laid out as RoBERTa takes it (data/tokenizers/roberta_input.h): one
// sequence per example, a pair joined as `<s> a </s></s> b </s>`.
#include <cstdint>
#include <vector>

#include "data/tokenizers/gpt2_codec.h"
#include "data/encoding/labelled_sequences.h"

namespace tn {

/// Encodes every split, cutting each example to max_positions tokens (the longer text first).
std::vector<LabelledSequences> encode_roberta(const std::vector<SentenceSplit>& splits, const Gpt2Codec& codec,
                                              int64_t max_positions);

}  // namespace tn
