#pragma once
// Messages of nlohmann::json's exceptions in words a user can act on: the library's
// "[json.exception.parse_error.101] parse error at line 1, column 9: syntax error while parsing
// value - unexpected end of input; ..." becomes "not valid JSON at line 1, column 9: unexpected end
// of input; ...".
#include <exception>
#include <nlohmann/json.hpp>
#include <string>

namespace tn {

/// The message of `e` without nlohmann::json's "[json.exception.<kind>.<id>]" tag, its parse errors
/// as "not valid JSON at line L, column C: <what was found>", a missing key as `the key "k" is
/// missing`, a type error as "a value of the wrong type (<what>)". Any other exception: e.what().
std::string json_error_message(const std::exception& e);

/// value.dump(indent) for text the tool writes (metrics, summaries, predictions, statistics): a
/// string holding bytes that are not UTF-8 (a file or class name from a dataset) gets U+FFFD in
/// their place where dump() would throw json type_error 316.
std::string dump_json_text(const nlohmann::json& value, int indent = -1);
std::string dump_json_text(const nlohmann::ordered_json& value, int indent = -1);

}  // namespace tn
