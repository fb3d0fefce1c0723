#pragma once
// Messages of nlohmann::json's exceptions in words a user can act on: the library's
// "[json.exception.parse_error.101] parse error at line 1, column 9: syntax error while parsing
// value - unexpected end of input; ..." becomes "not valid JSON at line 1, column 9: unexpected end
// of input; ...".
#include <exception>
#include <string>

namespace tn {

/// The message of `e` without nlohmann::json's "[json.exception.<kind>.<id>]" tag, its parse errors
/// as "not valid JSON at line L, column C: <what was found>", a missing key as `the key "k" is
/// missing`, a type error as "a value of the wrong type (<what>)". Any other exception: e.what().
std::string json_error_message(const std::exception& e);

}  // namespace tn
