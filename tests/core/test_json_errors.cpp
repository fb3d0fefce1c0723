// json_error_message (core/platform/io/json_errors.h): nlohmann::json's exception texts in a user's words.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "core/platform/io/json_errors.h"

using namespace tn;

namespace {

template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return json_error_message(e);
  }
  return "";
}

}  // namespace

TEST_CASE("json_error_message: parse errors give line, column and what was found, without the library's tag") {
  // "{\"bad\": " ends after 8 characters: the library reports line 1, column 9.
  CHECK(message_of([] { [[maybe_unused]] const auto parsed = nlohmann::json::parse("{\"bad\": "); }) ==
        "not valid JSON at line 1, column 9: unexpected end of input; expected '[', '{', or a literal");
  const std::string second = message_of([] { [[maybe_unused]] const auto parsed = nlohmann::json::parse("{\"a\": 1}\n{\"b\": 2}"); });
  CHECK(second.starts_with("not valid JSON at line 2, column 1: unexpected '{'"));
  CHECK(second.find("json.exception") == std::string::npos);
}

TEST_CASE("json_error_message: a missing key and a wrong type are named, other exceptions kept") {
  const nlohmann::json j = nlohmann::json::parse("{\"a\": \"s\"}");
  CHECK(message_of([&] { (void)j.at("b"); }) == "the key \"b\" is missing");
  CHECK(message_of([&] { (void)j.at("a").get<double>(); }) ==
        "a value of the wrong type (type must be number, but is string)");
  CHECK(message_of([] { throw std::runtime_error("plain"); }) == "plain");
}

TEST_CASE("json_error_message: a number beyond a double's range names the number (out_of_range 406)") {
  // 85e671 exceeds DBL_MAX (about 1.8e308): the library throws out_of_range, not parse_error.
  CHECK(message_of([] { [[maybe_unused]] const auto parsed = nlohmann::json::parse("[85e671]"); }) ==
        "a number too large for a double ('85e671')");
}
