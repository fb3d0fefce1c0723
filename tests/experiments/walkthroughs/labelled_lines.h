#pragma once
// The reader walkthrough's example (docs/architecture.md, "Add a reader", step 1): the file format
// of a `labelled_lines` split, one example per line: its label, a tab, its text. The test suite
// builds it exactly as a reader of the library would be built, and registers it with add_reader
// (data/readers/registry.h) instead of a line in registry.cpp.
#include <string>
#include <vector>

#include "data/readers/reader.h"

namespace tn::walkthrough {

/// Reads one split (`label<TAB>text` per line; labels among `labels`, class = its index). Throws
/// DataError naming the path (missing, empty, no rows) or path:line (not two fields, an unknown
/// label, an empty text), each with the fix.
SentenceSplit read_labelled_lines(const std::string& path, const std::string& name, SentenceSplit::Role role,
                                  const std::vector<std::string>& labels);

}  // namespace tn::walkthrough
