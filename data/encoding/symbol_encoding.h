#pragma once
// The symbol encoding of the LRA token tasks (the OpenNLPLab/lra and S4 loaders, which the paper's
// LRA code uses): each text split into symbols (Unicode characters, or ListOps tokens:
// data/tokenizers/symbol_vocab.h), cut to its first max_length - 1 symbols, <eos> appended; the
// vocabulary built from the training split's symbols after the cut, with min_freq. A pair stays two
// documents (the dual encoder of LRA Retrieval), each cut and ended alone.
#include <cstdint>
#include <vector>

#include "data/tokenizers/tokenizer_spec.h"
#include "data/encoding/labelled_sequences.h"

namespace tn {

/// Encodes every split (train first) with a vocabulary built from the train split. A symbol
/// outside the vocabulary becomes <unk> (counted in `unknown`) for char; for listops, whose grammar
/// is closed, it is a DataError naming file:line and the symbol (a split using a symbol the
/// training split never does). Throws ShapeError for a tokenizer without a vocabulary (word,
/// gpt2) or max_length < 2.
EncodedData encode_symbols(const std::vector<SentenceSplit>& splits, const TokenizerSpec& tokenizer,
                           int64_t max_length);

}  // namespace tn
