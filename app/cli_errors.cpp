#include "app/cli_errors.h"

#include <cstdlib>
#include <regex>
#include <sstream>

#include "core/process/shell_quote.h"

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

/// The --set or --grid words for arguments CLI11 did not expect that read as Hydra overrides
/// ("train.max_steps=5" -> "--set train.max_steps=5"); "" when one of them does not.
std::string hydra_overrides(const std::string& words) {
  static const std::regex override_word("^\\+{0,2}([A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z0-9_]+)*)=(.*)$");
  std::string out;
  std::istringstream in(words);
  for (std::string word; in >> word;) {  // CLI11 lists them last first (detail::rjoin)
    std::smatch m;
    if (!std::regex_match(word, m, override_word)) return "";
    const std::string value = m[3].str();
    const bool list = value.find(',') != std::string::npos && value.find_first_of("[{") == std::string::npos;
    out = (list ? "--grid " : "--set ") + shell_quote(m[1].str() + "=" + value) + (out.empty() ? "" : " ") + out;
  }
  return out;
}

}  // namespace

std::string cli_error_text(const std::string& message, const std::string& verb) {
  static const std::regex unexpected("^The following arguments? (was|were) not expected: (.*)$");
  std::smatch u;
  if (std::regex_match(message, u, unexpected))
    if (const std::string words = hydra_overrides(u[2].str()); !words.empty()) {
      if (verb != "sweep" && words.find("--grid ") != std::string::npos)
        return "The following argument" + std::string(u[1].str() == "was" ? " was" : "s were") +
               " not expected.\nA list of values is a sweep (Hydra's multirun): transnormer sweep SPEC.yaml " + words +
               " (one point per value); `" + verb + "` takes one value per key, with --set key=value";
      return u[1].str() == "was" ? "The following argument was not expected: " + words.substr(words.find(' ') + 1) +
                                       "\nSpec values are overridden with --set key=value (a sweep varies one with "
                                       "--grid key=v1,v2): " + words
                                 : "The following arguments were not expected.\nSpec values are overridden with "
                                   "--set key=value (a sweep varies one with --grid key=v1,v2): " + words;
    }
  static const std::regex range("^(.*: ?)?Value (.*) not in range (\\S+) to (\\S+)$");
  std::smatch m;
  if (!std::regex_match(message, m, range)) return message;
  const bool whole = m[3].str().find('.') == std::string::npos && m[4].str().find('.') == std::string::npos;
  const std::string lo = trimmed(m[3].str()), hi = trimmed(m[4].str());
  const std::string value = m[2].str().empty() ? "an empty value" : "'" + m[2].str() + "'";
  if (is_number(m[2].str())) {  // in range, but a whole number was asked: "Value 1.5 not in range 1 to 60"
    if (!whole || m[2].str().find_first_not_of("+-0123456789") == std::string::npos) return message;
    return m[1].str() + value + " is not a whole number; give a whole number from " + lo + " to " + hi;
  }
  return m[1].str() + value + " is not a number; give " + (whole ? "a whole number" : "a number") + " from " + lo +
         " to " + hi;
}

}  // namespace tn::app
