#pragma once
// Parsing LRA Retrieval (AAN) .tsv files (Tay et al. 2021; lra_release/tsv_data/
// new_aan_pairs.{train,eval,test}.tsv, as the official matching/input_pipeline.py and the
// OpenNLPLab/S4 loaders read them): no header, five tab-separated columns
// `label  input1_id  input2_id  text1  text2`, label 1 when the two papers are citation-linked,
// else 0 (written 0/1 or 0.0/1.0: the official pipeline reads it as a float).
#include <string>

#include "data/readers/reader.h"

namespace tn {

/// Reads one split file into a SentenceSplit of pairs (a = text1, b = text2, id =
/// "input1_id/input2_id"). Throws DataError naming the path (missing, empty, not UTF-8) or
/// path:line (a row without exactly 5 columns, a label other than 0 or 1, an empty text), each
/// with the fix.
SentenceSplit read_aan_split(const std::string& path, const std::string& name, SentenceSplit::Role role);

}  // namespace tn
