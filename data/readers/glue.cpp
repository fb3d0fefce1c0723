#include "data/readers/glue.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "data/readers/text_file.h"

namespace tn {
namespace {

std::string data_hint(const GlueTask& task) {
  return "set --data-root or TRANSNORMER_DATA to the folder holding glue/" + std::string(task.name) +
         "/, or data.dir to the task's folder; datasets/README.md \"GLUE\" lists the files the GLUE "
         "baseline's download_glue_data.py writes";
}

std::string quoted_list(const std::vector<std::string_view>& names) {
  std::string out;
  for (size_t k = 0; k < names.size(); ++k) out += (k ? ", \"" : "\"") + std::string(names[k]) + "\"";
  return out;
}

/// Parses a regression score: the whole field a finite number in [min, max].
bool parse_score(std::string_view field, double min, double max, double& value) {
  if (field.empty() || std::isspace(static_cast<unsigned char>(field.front()))) return false;
  const std::string text(field);
  char* end = nullptr;
  errno = 0;
  value = std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size()) return false;
  return std::isfinite(value) && value >= min && value <= max;
}

const char* kind_name(GlueFileKind kind) {
  switch (kind) {
    case GlueFileKind::Train: return "train";
    case GlueFileKind::Dev: return "dev";
    case GlueFileKind::Test: return "test";
  }
  return "?";
}

}  // namespace

const GlueLayout& glue_layout(const GlueTask& task, GlueFileKind kind) {
  switch (kind) {
    case GlueFileKind::Train: return task.train;
    case GlueFileKind::Dev: return task.dev;
    case GlueFileKind::Test: return task.test;
  }
  return task.train;
}

SentenceSplit read_glue_split(const GlueTask& task, GlueFileKind kind, const std::string& path) {
  const GlueLayout& layout = glue_layout(task, kind);
  const std::string task_name(task.name);
  SentenceSplit split;
  split.file = path;
  split.labelled = layout.label >= 0;
  split.name = kind == GlueFileKind::Train ? "train" : kind == GlueFileKind::Dev ? "valid" : "test";
  split.role = kind == GlueFileKind::Train ? SentenceSplit::Role::Train
               : kind == GlueFileKind::Dev ? SentenceSplit::Role::Valid
                                           : SentenceSplit::Role::Test;

  const std::string text = read_text_file(
      path, "a GLUE " + task_name + " " + kind_name(kind) + " .tsv file", data_hint(task));
  const std::string_view all(text);
  const bool qqp_rule = task.name == "QQP" && kind != GlueFileKind::Test;
  const auto expected = static_cast<size_t>(layout.columns);
  std::vector<int64_t> skipped_lines;
  for_each_line(all, [&](int64_t line_no, std::string_view line) {
    const std::vector<std::string_view> fields = split_tabs(line);
    const bool is_header = layout.header && line_no == 1;
    if (fields.size() != expected) {
      if (qqp_rule && !is_header) {
        skipped_lines.push_back(line_no);
        return;
      }
      throw DataError(at_line(path, line_no) + ": expected " + std::to_string(expected) +
                      " tab-separated columns, found " + std::to_string(fields.size()) + " (GLUE " + task_name +
                      " " + kind_name(kind) + " files have " + std::to_string(expected) +
                      " columns, split on tabs with no quoting: check that this is the task's " + kind_name(kind) +
                      " file, not e.g. its test file, and that no tab was lost or added)");
    }
    if (is_header) return;

    SentenceExample row;
    row.line = line_no;
    row.id = layout.id >= 0 ? std::string(fields[static_cast<size_t>(layout.id)])
                            : std::to_string(split.rows.size());
    row.a = std::string(fields[static_cast<size_t>(layout.a)]);
    row.has_b = layout.b >= 0;
    if (row.has_b) row.b = std::string(fields[static_cast<size_t>(layout.b)]);
    if (layout.label >= 0) {
      const std::string_view field = fields[static_cast<size_t>(layout.label)];
      if (task.regression) {
        if (!parse_score(field, task.target_min, task.target_max, row.target)) {
          char range[64];
          std::snprintf(range, sizeof range, "[%g, %g]", task.target_min, task.target_max);
          throw DataError(at_line(path, line_no) + ": score \"" + std::string(field) + "\" is not a number in " +
                          range + " (" + task_name + " scores are similarity ratings in that range; fix or "
                          "remove the row, or fetch the file again)");
        }
      } else {
        const auto it = std::find(task.labels.begin(), task.labels.end(), field);
        if (it == task.labels.end())
          throw DataError(at_line(path, line_no) + ": unknown label \"" + std::string(field) + "\" for " + task_name +
                          "; expected one of " + quoted_list(task.labels) +
                          " (check that data.task names the task this file belongs to)");
        row.label = static_cast<int32_t>(it - task.labels.begin());
      }
    }
    split.rows.push_back(std::move(row));
  });

  split.skipped = static_cast<int64_t>(skipped_lines.size());
  if (split.skipped > 0) {
    std::string lines;
    for (size_t k = 0; k < std::min<size_t>(skipped_lines.size(), 5); ++k)
      lines += (k ? ", " : "") + std::to_string(skipped_lines[k]);
    if (skipped_lines.size() > 5) lines += ", ...";
    spdlog::warn("{}: skipped {} malformed {} row(s) without {} tab-separated columns (lines {}), as GLUE's "
                 "own loaders do; {} rows kept",
                 path, split.skipped, task_name, expected, lines, split.rows.size());
  }
  if (split.rows.empty())
    throw DataError(path + ": has no rows" + (layout.header ? std::string(" after its header") : std::string()) +
                    " (a GLUE " + task_name + " " + kind_name(kind) + " file holds one example per line; fetch "
                    "it again; " + data_hint(task) + ")");
  return split;
}

}  // namespace tn
