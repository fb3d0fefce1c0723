#include "core/platform/io/json_errors.h"

#include <string_view>

namespace tn {

std::string dump_json_text(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string dump_json_text(const nlohmann::ordered_json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string json_error_message(const std::exception& e) {
  std::string_view text = e.what();
  constexpr std::string_view kTag = "[json.exception.";
  if (!text.starts_with(kTag)) return std::string(text);
  const std::string_view kind = text.substr(kTag.size(), text.find('.', kTag.size()) - kTag.size());
  if (const size_t end = text.find("] "); end != std::string_view::npos) text.remove_prefix(end + 2);
  if (kind == "parse_error") {
    // "parse error at line 1, column 9: syntax error while parsing value - unexpected ..."
    std::string_view where, what = text;
    if (text.starts_with("parse error ")) {
      const size_t colon = text.find(": ");
      where = text.substr(12, colon == std::string_view::npos ? 0 : colon - 12);  // "at line 1, column 9"
      what = colon == std::string_view::npos ? text : text.substr(colon + 2);
    }
    if (const size_t dash = what.find(" - "); what.starts_with("syntax error") && dash != std::string_view::npos)
      what.remove_prefix(dash + 3);
    return "not valid JSON" + (where.empty() ? std::string() : " " + std::string(where)) + ": " + std::string(what);
  }
  if (kind == "out_of_range" && text.starts_with("key '") && text.ends_with("' not found"))
    return "the key \"" + std::string(text.substr(5, text.size() - 5 - 11)) + "\" is missing";
  if (kind == "out_of_range" && text.starts_with("number overflow parsing '"))
    return "a number too large for a double (" + std::string(text.substr(24)) + ")";
  if (kind == "type_error") return "a value of the wrong type (" + std::string(text) + ")";
  return std::string(text);
}

}  // namespace tn
