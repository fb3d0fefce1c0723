#include "app/cli_errors.h"

#include <cstdlib>
#include <regex>

namespace tn::app {
namespace {

/// True when all of `text` reads as a number (strtod).
bool is_number(const std::string& text) {
  if (text.empty()) return false;
  char* end = nullptr;
  std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

/// "0.001000" -> "0.001", "1024.000000" -> "1024" (CLI11 prints a double's bounds with %f).
std::string trimmed(std::string bound) {
  if (bound.find('.') == std::string::npos) return bound;
  bound.erase(bound.find_last_not_of('0') + 1);
  if (bound.back() == '.') bound.pop_back();
  return bound;
}

}  // namespace

std::string cli_error_text(const std::string& message) {
  static const std::regex range("^(.*: ?)?Value (.*) not in range (\\S+) to (\\S+)$");
  std::smatch m;
  if (!std::regex_match(message, m, range) || is_number(m[2].str())) return message;
  const bool whole = m[3].str().find('.') == std::string::npos && m[4].str().find('.') == std::string::npos;
  const std::string lo = trimmed(m[3].str()), hi = trimmed(m[4].str());
  const std::string value = m[2].str().empty() ? "an empty value" : "'" + m[2].str() + "'";
  return m[1].str() + value + " is not a number; give " + (whole ? "a whole number" : "a number") + " from " + lo +
         " to " + hi;
}

}  // namespace tn::app
