#pragma once
// Small GLUE files in the exact layouts of the tasks the data folder lacks (MNLI), for the reader's
// and the sentence_prediction task's tests.
#include <string>

#include "tests/temp_dir.h"

namespace tn::test {

/// One MNLI row of `columns` tab-separated fields: index promptID pairID genre, the two binary
/// parses and parses, sentence1 sentence2, then `last` in every remaining column (the labels; ""
/// for a test row of 10 columns).
inline std::string mnli_row(int index, int columns, const std::string& s1, const std::string& s2,
                            const std::string& last) {
  std::string row = std::to_string(index) + "\t" + std::to_string(1000 + index) + "\t" + std::to_string(1000 + index) +
                    "n\tfiction\t( " + s1 + " )\t( " + s2 + " )\t(ROOT " + s1 + ")\t(ROOT " + s2 + ")\t" + s1 + "\t" + s2;
  for (int c = 10; c < columns - 1; ++c) row += "\t" + last;
  if (columns > 10) row += "\t" + last;
  return row + "\n";
}

/// Writes MNLI's five files into `dir`: train (3 rows, 12 columns), dev_matched (1 row) and
/// dev_mismatched (2 rows, 16 columns), test_matched (1 row) and test_mismatched (2 rows, 10
/// columns). The labels: train entailment, contradiction, neutral; dev_matched entailment;
/// dev_mismatched contradiction, neutral.
inline void write_mnli_files(const TempDir& dir) {
  const std::string head =
      "index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\tsentence2_binary_parse\tsentence1_parse\t"
      "sentence2_parse\tsentence1\tsentence2";
  dir.write("train.tsv", head + "\tlabel1\tgold_label\n" + mnli_row(0, 12, "The cat sat.", "A cat sat.", "entailment") +
                             mnli_row(1, 12, "It rained.", "It was dry.", "contradiction") +
                             mnli_row(2, 12, "He left.", "He left early.", "neutral"));
  const std::string dev_head = head + "\tlabel1\tlabel2\tlabel3\tlabel4\tlabel5\tgold_label\n";
  dir.write("dev_matched.tsv", dev_head + mnli_row(0, 16, "Birds fly.", "Birds move.", "entailment"));
  dir.write("dev_mismatched.tsv", dev_head + mnli_row(0, 16, "Fish swim.", "Fish walk.", "contradiction") +
                                      mnli_row(1, 16, "Snow fell.", "It was cold.", "neutral"));
  dir.write("test_matched.tsv", head + "\n" + mnli_row(0, 10, "One.", "Two.", ""));
  dir.write("test_mismatched.tsv", head + "\n" + mnli_row(0, 10, "Three.", "Four.", "") +
                                       mnli_row(1, 10, "Five.", "Six.", ""));
}

}  // namespace tn::test
