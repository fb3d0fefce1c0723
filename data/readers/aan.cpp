#include "data/readers/aan.h"

#include <filesystem>

#include "core/error.h"
#include "data/readers/text_file.h"

namespace tn {

namespace {
/// Where an AAN split of the folder holding `path` comes from.
std::string hint(const std::string& path) {
  const std::string folder = std::filesystem::path(path).parent_path().string();
  return "the LRA release's lra_release/tsv_data/new_aan_pairs.{train,eval,test}.tsv (`transnormer data fetch "
         "--lra` downloads the 8.23 GB release and unpacks them into <data root>/lra/aan), or `transnormer data "
         "generate aan --out " + (folder.empty() ? std::string(".") : folder) +
         "` for a small synthetic set in the same format";
}

/// 0 or 1 from "0", "1", "0.0", "1.0"; -1 otherwise.
int32_t parse_label(std::string_view field) {
  if (field == "0" || field == "0.0") return 0;
  if (field == "1" || field == "1.0") return 1;
  return -1;
}
}  // namespace

SentenceSplit read_aan_split(const std::string& path, const std::string& name, SentenceSplit::Role role) {
  SentenceSplit split;
  split.name = name;
  split.role = role;
  split.file = path;
  const std::string text = read_text_file(path, "an LRA Retrieval (AAN) .tsv file", hint(path));
  for_each_line(text, [&](int64_t line, std::string_view row) {
    const std::vector<std::string_view> fields = split_tabs(row);
    if (fields.size() != 5)
      throw DataError(at_line(path, line) + ": expected 5 tab-separated columns (label, input1_id, input2_id, text1, "
                      "text2), found " + std::to_string(fields.size()) + "; AAN files have no header and no quoting");
    const int32_t label = parse_label(fields[0]);
    if (label < 0)
      throw DataError(at_line(path, line) + ": label \"" + std::string(fields[0].substr(0, 20)) +
                      "\" is not 0 or 1 (1: the papers are citation-linked); fix or remove the row");
    if (fields[3].empty() || fields[4].empty())
      throw DataError(at_line(path, line) + ": text" + (fields[3].empty() ? "1" : "2") +
                      " is empty; each row pairs two documents: fix or remove the row");
    SentenceExample example;
    example.id = std::string(fields[1]) + "/" + std::string(fields[2]);
    example.a = std::string(fields[3]);
    example.b = std::string(fields[4]);
    example.has_b = true;
    example.label = label;
    example.line = line;
    split.rows.push_back(std::move(example));
  });
  if (split.rows.empty())
    throw DataError(path + ": has no rows (an AAN split holds one pair of documents per line; " + hint(path) + ")");
  return split;
}

}  // namespace tn
