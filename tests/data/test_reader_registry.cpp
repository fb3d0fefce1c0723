// The reader registry: data.reader picks a reader (wikitext by default), each with its own typed
// section; unknown readers and keys are named with the nearest valid one.
#include <doctest/doctest.h>

#include "core/config/json_section.h"
#include "data/readers/registry.h"
#include "data/readers/wikitext_spec.h"

using namespace tn;
using nlohmann::json;

namespace {
std::shared_ptr<const DataSpec> resolve(const json& section) { return resolve_data_spec(JsonSection(section, "data")); }

std::string issue(const json& section) {
  try {
    resolve(section);
  } catch (const ConfigIssue& e) {
    return e.what();
  }
  FAIL("resolved without an issue");
  return "";
}
}  // namespace

TEST_CASE("reader registry: wikitext by default, typed, and its JSON resolves to an equal spec") {
  const auto spec = resolve(json{{"train", "wikitext-103/wiki.valid.tokens"}, {"split_valid_from_train", 0.1}});
  REQUIRE(spec->reader() == "wikitext");
  const auto& w = dynamic_cast<const WikitextSpec&>(*spec);
  CHECK(w.train == "wikitext-103/wiki.valid.tokens");
  CHECK(w.seq_len == 256);
  CHECK(spec->tokens_per_sample() == 256);
  const nlohmann::ordered_json written = spec->to_json();
  CHECK(written.begin().key() == "reader");
  CHECK(written["valid"].is_null());
  const auto again = resolve(json::parse(written.dump()));
  CHECK(again->equals(*spec));
  CHECK_FALSE(resolve(json{{"train", "x.tokens"}})->equals(*spec));
  CHECK(reader_table().front().name == "wikitext");
}

TEST_CASE("reader registry: unknown reader, unknown key, and the wikitext checks") {
  CHECK(issue(json{{"reader", "wikitxt"}, {"train", "a"}}).find("data.reader: expected one of wikitext") !=
        std::string::npos);
  CHECK(issue(json{{"reader", "wikitxt"}, {"train", "a"}}).find("wikitext") != std::string::npos);
  CHECK(issue(json{{"train", "a"}, {"seq_lne", 4}}).find("did you mean `seq_len`?") != std::string::npos);
  CHECK(issue(json::object()).find("data.train: is required") != std::string::npos);
  CHECK(issue(json{{"train", "a"}, {"valid", "b"}, {"split_valid_from_train", 0.1}}).find("cannot be combined") !=
        std::string::npos);
  CHECK(issue(json{{"train", "a"}, {"seq_len", 0}}).find("data.seq_len: must be >= 1") != std::string::npos);
}
