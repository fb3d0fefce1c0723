#pragma once
// The reader registry: `data.reader` names a reader ("wikitext", the default), and its entry
// resolves the rest of the `data:` section into that reader's typed DataSpec. A new reader adds
// its own files and one entry to the table in registry.cpp; nothing else changes.
#include <memory>
#include <string_view>
#include <vector>

#include "core/platform/config/json_section.h"
#include "data/readers/reader.h"

namespace tn {

struct ReaderEntry {
  std::string_view name;         // value of data.reader
  std::string_view description;  // one line, for error messages and docs
  /// Resolves and validates the section (its `reader` key already consumed): throws ConfigIssue
  /// at the full key path with a fix.
  std::shared_ptr<const DataSpec> (*resolve)(const JsonSection& section);
};

/// Every reader, in a stable order: the table of registry.cpp, then those add_reader added.
const std::vector<ReaderEntry>& reader_table();

/// Adds a reader that lives outside this library (a program's own, or the test suite's
/// walkthrough examples, tests/experiments/walkthroughs/) after the table's, as its own line in
/// registry.cpp would. Call it before any spec is resolved, from one thread; `entry.name` and
/// `description` must outlive the process (string literals). Throws std::invalid_argument for a
/// name already in the table.
void add_reader(const ReaderEntry& entry);

/// Resolves a whole `data:` section: `reader` (default "wikitext"; an unknown name is a
/// ConfigIssue listing the readers with the nearest one), then the reader's own keys.
std::shared_ptr<const DataSpec> resolve_data_spec(const JsonSection& section);

}  // namespace tn
