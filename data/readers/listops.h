#pragma once
// Parsing LRA ListOps .tsv files (Tay et al. 2021, "Long Range Arena"; the official
// lra_benchmarks/data/listops.py writes them): a header `Source\tTarget`, then one row per
// example: the expression, every element wrapped in parentheses (`( ( ( [MAX 2 ) 9 ) ] )`), a tab,
// and its value 0-9.
#include <string>
#include <string_view>

#include "data/readers/reader.h"

namespace tn {

/// The ten label names ("0".."9"), for SentenceTarget.
const std::vector<std::string>& listops_labels();

/// What is wrong with a ListOps expression, or "" when it is well formed: every symbol one of
/// `[MIN [MAX [MED [SM ] 0-9` (parentheses are dropped, as the official tokenizer does), brackets
/// balanced (each operator closed by `]`, nothing after the outermost `]`), each operator with at
/// least one argument, and parentheses balanced and where the official generator writes them.
std::string listops_problem(std::string_view source);

/// Reads one split file into a SentenceSplit named `name` with `role` (labels = the target value,
/// ids = the row's 0-based ordinal). Throws DataError naming the path (missing, empty, no rows
/// after the header, not UTF-8) or path:line (a missing or wrong header, a row without exactly one
/// tab, a target outside 0-9, a malformed expression), each with the fix.
SentenceSplit read_listops_split(const std::string& path, const std::string& name, SentenceSplit::Role role);

}  // namespace tn
