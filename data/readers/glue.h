#pragma once
// Parsing GLUE .tsv files (datasets/README.md "GLUE") into SentenceSplits, under the task table's
// layouts (data/readers/glue_tasks.h). The rules are GLUE's own: lines split on '\n' (a trailing
// '\r' dropped), the UTF-8 byte-order mark removed from the first line, fields split on '\t' with
// no quote handling (the GLUE baseline reads with csv.QUOTE_NONE; many fields start with '"').
#include <string>

#include "data/readers/glue_tasks.h"
#include "data/readers/reader.h"

namespace tn {

/// Which of a task's layouts a file has.
enum class GlueFileKind { Train, Dev, Test };

/// The task's layout for `kind` (train, dev or test columns).
const GlueLayout& glue_layout(const GlueTask& task, GlueFileKind kind);

/// Reads one GLUE file of `task` laid out as `kind`. The split is named "train", "valid" or
/// "test" with the matching role (callers rename extra splits); test files yield unlabelled rows.
/// Class labels are mapped through task.labels; STS-B scores are parsed as a double in
/// [target_min, target_max]. QQP train/dev rows with the wrong column count are skipped (as GLUE's
/// own loaders do), counted in `skipped` and logged as a warning naming the file; for every other
/// task such a row is an error. Throws DataError naming the path when the file is missing, a
/// directory, unreadable, or has no rows; naming `path:line` for invalid UTF-8, a NUL byte, a row
/// with the wrong number of columns, an unknown label or a bad score; each with the fix.
SentenceSplit read_glue_split(const GlueTask& task, GlueFileKind kind, const std::string& path);

}  // namespace tn
