#include "experiments/reports/report_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>

namespace tn {

namespace {
std::string printf_text(const char* format, double v, int precision = -1) {
  char buf[64];
  if (precision < 0)
    std::snprintf(buf, sizeof buf, format, v);
  else
    std::snprintf(buf, sizeof buf, format, precision, v);
  return buf;
}

std::string non_finite(double v) { return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf"; }
}  // namespace

std::string format_value(double v) {
  if (!std::isfinite(v)) return non_finite(v);
  if (v == std::round(v) && std::abs(v) < 1e15) return printf_text("%.0f", v);
  if (std::abs(v) >= 1e5) return printf_text("%.0f", v);
  return printf_text("%.5g", v);
}

std::string format_stat(const PooledStat& s) {
  if (s.n == 0) return "";
  if (s.n == 1 || !std::isfinite(s.std) || !std::isfinite(s.mean)) return format_value(s.mean);
  if (s.std == 0) return format_value(s.mean) + " ± 0";
  const int decimals = std::clamp(1 - static_cast<int>(std::floor(std::log10(s.std))), 0, 8);
  return printf_text("%.*f", s.mean, decimals) + " ± " + printf_text("%.*f", s.std, decimals);
}

std::string format_count(double v) {
  if (!std::isfinite(v)) return non_finite(v);
  const double a = std::abs(v);
  if (a >= 1e9) return printf_text("%.3gG", v / 1e9);
  if (a >= 1e6) return printf_text("%.3gM", v / 1e6);
  if (a >= 1e3) return printf_text("%.3gk", v / 1e3);
  return printf_text("%.0f", v);
}

std::string exact_number(double v) {
  if (!std::isfinite(v)) return "";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string md_cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n' || c == '\r')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string html_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string relative_link(const std::string& target, const std::string& from) {
  namespace fs = std::filesystem;
  const fs::path t = fs::absolute(target).lexically_normal(), f = fs::absolute(from).lexically_normal();
  fs::path rel = t.lexically_relative(f);
  if (rel.empty()) rel = t;
  std::string out = rel.generic_string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out.empty() ? "." : out;
}

}  // namespace tn
