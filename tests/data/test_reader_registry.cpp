// The reader registry: data.reader picks a reader (wikitext by default), each with its own typed
// section; unknown readers and keys are named with the nearest valid one.
#include <doctest/doctest.h>

#include "core/platform/config/json_section.h"
#include "data/readers/glue_spec.h"
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

TEST_CASE("reader registry: glue resolves to a typed GlueSpec with the task's defaults") {
  const auto spec = resolve(json{{"reader", "glue"}, {"task", "SST-2"}});
  REQUIRE(spec->reader() == "glue");
  const auto& g = dynamic_cast<const GlueSpec&>(*spec);
  CHECK(g.task->name == "SST-2");
  CHECK(g.dir == "glue/SST-2");
  CHECK(g.train == "train.tsv");
  CHECK(g.valid == "dev.tsv");
  CHECK(g.test == "test.tsv");
  CHECK(g.extra_valid.empty());
  CHECK(g.max_positions == 512);
  CHECK(spec->tokens_per_sample() == 512);
  CHECK(g.file_path("/data", g.valid) == "/data/glue/SST-2/dev.tsv");
  CHECK(g.file_path("/data", "/abs/dev.tsv") == "/abs/dev.tsv");
  CHECK(g.bpe_path("/data") == "/data/gpt2_bpe");
  CHECK(g.dict_path("/data") == "/data/gpt2_bpe/dict.txt");
  CHECK(dynamic_cast<const SentenceSource*>(spec.get()) != nullptr);
  CHECK(dynamic_cast<const TextSource*>(spec.get()) == nullptr);

  const nlohmann::ordered_json written = spec->to_json();
  CHECK(written.begin().key() == "reader");
  CHECK(resolve(json::parse(written.dump()))->equals(*spec));
  CHECK_FALSE(resolve(json{{"reader", "glue"}, {"task", "SST-2"}, {"max_positions", 256}})->equals(*spec));
  CHECK_FALSE(resolve(json{{"reader", "glue"}, {"task", "CoLA"}})->equals(*spec));

  const auto mnli = resolve(json{{"reader", "glue"}, {"task", "MNLI"}, {"test", nullptr}, {"extra_test", json::array()}});
  const auto& m = dynamic_cast<const GlueSpec&>(*mnli);
  CHECK(m.valid == "dev_matched.tsv");
  CHECK(m.extra_valid == std::vector<std::string>{"dev_mismatched.tsv"});
  CHECK(m.test.empty());
  CHECK(m.extra_test.empty());
  CHECK(resolve(json::parse(mnli->to_json().dump()))->equals(*mnli));
}

TEST_CASE("reader registry: a bad glue task names the nearest GLUE task") {
  const auto glue = [](json extra) {
    json section{{"reader", "glue"}};
    section.update(extra);
    return issue(section);
  };
  CHECK(glue(json{{"task", "SST2"}}).find("data.task: is not a GLUE task: \"SST2\"") != std::string::npos);
  CHECK(glue(json{{"task", "SST2"}}).find("did you mean `SST-2`?") != std::string::npos);
  CHECK(glue(json{{"task", "mnli"}}).find("did you mean `MNLI`? (GLUE names are case-sensitive)") != std::string::npos);
  CHECK(glue(json{{"task", "STSB"}}).find("did you mean `STS-B`?") != std::string::npos);
  CHECK(glue(json{{"task", "squad"}}).find("CoLA, SST-2, MRPC, QQP, STS-B, MNLI, QNLI, RTE, WNLI") != std::string::npos);
  CHECK(glue(json::object()).find("data.task: is required") != std::string::npos);
  CHECK(glue(json{{"task", "RTE"}, {"vaild", "dev.tsv"}}).find("did you mean `valid`?") != std::string::npos);
  CHECK(glue(json{{"task", "RTE"}, {"max_positions", 1}}).find("data.max_positions: must be >= 2") != std::string::npos);
  CHECK(glue(json{{"task", "RTE"}, {"extra_valid", "dev2.tsv"}}).find("expected a list of file names") !=
        std::string::npos);
  CHECK(glue(json{{"task", "RTE"}, {"extra_valid", {"dev.tsv", "x/dev.tsv"}}}).find("twice") != std::string::npos);
  CHECK(glue(json{{"task", "RTE"}, {"train", ""}}).find("data.train: is empty") != std::string::npos);
}
