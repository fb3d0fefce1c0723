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
#include "core/io/atomic_file.h"
#include "data/text/utf8.h"

namespace tn {
namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";

std::string data_hint(const GlueTask& task) {
  return "set --data-root or TRANSNORMER_DATA to the folder holding glue/" + std::string(task.name) +
         "/, or data.dir to the task's folder; data/README.md \"GLUE\" lists the files the GLUE "
         "baseline's download_glue_data.py writes";
}

/// "path:line" for messages; line is 1-based.
std::string at(const std::string& path, int64_t line) { return path + ":" + std::to_string(line); }

/// 1-based line and column of byte `offset` in `text`.
std::pair<int64_t, int64_t> line_column(std::string_view text, size_t offset) {
  const auto before = text.substr(0, offset);
  const int64_t line = 1 + std::count(before.begin(), before.end(), '\n');
  const size_t line_start = before.rfind('\n');
  const size_t in_line = line_start == std::string_view::npos ? offset : offset - line_start - 1;
  const int64_t column = static_cast<int64_t>(in_line) + 1;
  return {line, column};
}

std::vector<std::string_view> split_tabs(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    const size_t tab = line.find('\t', start);
    if (tab == std::string_view::npos) {
      fields.push_back(line.substr(start));
      return fields;
    }
    fields.push_back(line.substr(start, tab - start));
    start = tab + 1;
  }
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

  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw DataError(path + ": no such file (GLUE " + task_name + " " + kind_name(kind) + " split; " +
                    data_hint(task) + ")");
  if (std::filesystem::is_directory(path, ec))
    throw DataError(path + ": is a directory, expected a GLUE " + task_name + " .tsv file (" + data_hint(task) + ")");
  std::string text;
  try {
    text = read_file(path);
  } catch (const DataError& err) {
    throw DataError(std::string(err.what()) + " (check the file's permissions; " + data_hint(task) + ")");
  }
  if (text.empty())
    throw DataError(path + ": is empty, expected a GLUE " + task_name + " " + kind_name(kind) +
                    " file (fetch it again; " + data_hint(task) + ")");
  if (const void* nul = std::memchr(text.data(), '\0', text.size())) {
    const auto [line, column] = line_column(text, static_cast<size_t>(static_cast<const char*>(nul) - text.data()));
    throw DataError(at(path, line) + ": contains a NUL byte (column " + std::to_string(column) +
                    "), so it is not a GLUE .tsv text file (point data.dir at the task's folder)");
  }
  if (const size_t bad = invalid_utf8_at(text); bad != std::string_view::npos) {
    const auto [line, column] = line_column(text, bad);
    throw DataError(at(path, line) + ": is not valid UTF-8 (bad byte at column " + std::to_string(column) +
                    "); GLUE files are UTF-8: convert the file or fetch it again");
  }

  const std::string_view all(text);
  const bool qqp_rule = task.name == "QQP" && kind != GlueFileKind::Test;
  const auto expected = static_cast<size_t>(layout.columns);
  std::vector<int64_t> skipped_lines;
  int64_t line_no = 0;
  size_t start = 0;
  while (start < all.size()) {
    size_t end = all.find('\n', start);
    if (end == std::string_view::npos) end = all.size();
    std::string_view line = all.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (line_no == 1 && line.starts_with(kBom)) line.remove_prefix(kBom.size());
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);

    const std::vector<std::string_view> fields = split_tabs(line);
    const bool is_header = layout.header && line_no == 1;
    if (fields.size() != expected) {
      if (qqp_rule && !is_header) {
        skipped_lines.push_back(line_no);
        continue;
      }
      throw DataError(at(path, line_no) + ": expected " + std::to_string(expected) +
                      " tab-separated columns, found " + std::to_string(fields.size()) + " (GLUE " + task_name +
                      " " + kind_name(kind) + " files have " + std::to_string(expected) +
                      " columns, split on tabs with no quoting: check that this is the task's " + kind_name(kind) +
                      " file, not e.g. its test file, and that no tab was lost or added)");
    }
    if (is_header) continue;

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
          throw DataError(at(path, line_no) + ": score \"" + std::string(field) + "\" is not a number in " +
                          range + " (" + task_name + " scores are similarity ratings in that range; fix or "
                          "remove the row, or fetch the file again)");
        }
      } else {
        const auto it = std::find(task.labels.begin(), task.labels.end(), field);
        if (it == task.labels.end())
          throw DataError(at(path, line_no) + ": unknown label \"" + std::string(field) + "\" for " + task_name +
                          "; expected one of " + quoted_list(task.labels) +
                          " (check that data.task names the task this file belongs to)");
        row.label = static_cast<int32_t>(it - task.labels.begin());
      }
    }
    split.rows.push_back(std::move(row));
  }

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
