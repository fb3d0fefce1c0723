#include "tests/experiments/walkthroughs/labelled_lines.h"

#include <algorithm>

#include "core/error.h"
#include "data/readers/text_file.h"

namespace tn::walkthrough {

SentenceSplit read_labelled_lines(const std::string& path, const std::string& name, SentenceSplit::Role role,
                                  const std::vector<std::string>& labels) {
  SentenceSplit split;
  split.name = name;
  split.role = role;
  split.file = path;
  const std::string text = read_text_file(path, "a labelled_lines file", "write one `label<TAB>text` per line");
  for_each_line(text, [&](int64_t line, std::string_view row) {
    const std::vector<std::string_view> fields = split_tabs(row);
    if (fields.size() != 2)
      throw DataError(at_line(path, line) + ": expected 2 tab-separated fields (label, text), found " +
                      std::to_string(fields.size()) + "; write the label, a tab, then the text");
    const auto it = std::find(labels.begin(), labels.end(), fields[0]);
    if (it == labels.end())
      throw DataError(at_line(path, line) + ": unknown label \"" + std::string(fields[0].substr(0, 20)) +
                      "\"; use one of data.labels or add it there");
    if (fields[1].empty()) throw DataError(at_line(path, line) + ": empty text; fix or remove the row");
    SentenceExample example;
    example.id = std::to_string(split.rows.size());
    example.a = std::string(fields[1]);
    example.label = static_cast<int32_t>(it - labels.begin());
    example.line = line;
    split.rows.push_back(std::move(example));
  });
  if (split.rows.empty()) throw DataError(path + ": has no rows; write one `label<TAB>text` per line");
  return split;
}

}  // namespace tn::walkthrough
