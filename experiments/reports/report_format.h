#pragma once
// How `report` writes numbers and names: table text (rounded for reading), exact numbers for CSV,
// escaping for Markdown, CSV and HTML, and links from the report to a run directory.
#include <string>

#include "experiments/reports/pooled_stat.h"

namespace tn {

/// A value for reading: 5 significant digits, integers as integers, "nan"/"inf" as such.
std::string format_value(double v);
/// "12.0 ± 2.0": the mean to the precision of two significant digits of the std ("3.4012 ± 0"
/// when the std is 0); the mean alone (format_value) when n == 1; "" when n == 0.
std::string format_stat(const PooledStat& s);
/// A parameter count: "3.03M", "45.1k", "512".
std::string format_count(double v);
/// The shortest text that reads back as exactly `v` ("12", "0.1", "2.5e-07"); "" when not finite.
std::string exact_number(double v);

/// `text` as one CSV field (RFC 4180: quoted when it holds a comma, quote or line break).
std::string csv_field(const std::string& text);
/// `text` safe inside a Markdown table cell ('|' escaped, line breaks as spaces).
std::string md_cell(const std::string& text);
/// `text` with &, <, >, " escaped for HTML.
std::string html_escape(const std::string& text);

/// The path of `target` relative to the folder `from` (both as given, made absolute), with '/'
/// separators: what a link in a report written to `from` uses.
std::string relative_link(const std::string& target, const std::string& from);

}  // namespace tn
