#pragma once
// RoBERTa's input layout for sentence-level tasks (Liu et al. 2019; fairseq's sentence_prediction
// task and RobertaHubInterface.encode): one text as `<s> a </s>`, a pair as `<s> a </s></s> b </s>`.
#include <cstdint>
#include <vector>

namespace tn {

/// Writes the model input of `a` (and `b`, when pair) into `out` (replacing its contents), cut to
/// at most max_positions tokens: tokens are dropped from the end of the longer text first (the
/// first text on a tie), one at a time, until the whole fits, so each text keeps its beginning.
/// Specials: bos = <s>, eos = </s>. Throws ShapeError when max_positions cannot hold the
/// specials and one token of each text (3 for one text, 6 for a pair).
void roberta_input(const std::vector<int32_t>& a, const std::vector<int32_t>* b, int64_t max_positions, int32_t bos,
                   int32_t eos, std::vector<int32_t>& out);

}  // namespace tn
