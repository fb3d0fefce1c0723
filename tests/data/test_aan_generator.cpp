// The synthetic AAN generator (data/generators/aan_generator): its files read back by the real
// `aan` reader (through the registry, as a spec reads them), balanced labels per split, the
// hidden topics behind the labels, determinism for a seed, the refusals, and the --overwrite rule.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/platform/config/json_section.h"
#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "data/generators/aan_generator.h"
#include "data/readers/reader.h"
#include "data/readers/registry.h"
#include "tests/temp_dir.h"

using namespace tn;
using nlohmann::json;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string error_of(const AanOptions& o) {
  try {
    o.validate();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

AanOptions small_options(uint64_t seed) {
  AanOptions o;
  o.count = 200;
  o.seed = seed;
  return o;
}

/// The splits of the folder `dir` as a spec with `reader: aan` reads them.
std::vector<SentenceSplit> read_back(const std::string& dir) {
  const auto spec = resolve_data_spec(JsonSection(json{{"reader", "aan"}, {"dir", dir}}, "data"));
  return dynamic_cast<const SentenceSource&>(*spec).read_sentences("/unused");
}

/// The share of a document's characters that are in `chars`.
double share_in(const std::string& text, const std::string& chars) {
  int64_t in = 0, letters = 0;
  for (const char c : text) {
    if (c == ' ') continue;
    ++letters;
    in += chars.find(c) != std::string::npos;
  }
  return static_cast<double>(in) / static_cast<double>(letters);
}

}  // namespace

TEST_CASE("aan generator: the real aan reader reads the files back, pair for pair") {
  const test::TempDir dir("aan_gen");
  const AanOptions o = small_options(3);
  const AanData data = generate_aan(o);
  const std::vector<std::string> files = write_aan(dir.file("set"), o, data, false);
  REQUIRE(files.size() == 3);
  CHECK(std::filesystem::path(files[0]).filename() == "new_aan_pairs.train.tsv");
  CHECK(std::filesystem::path(files[1]).filename() == "new_aan_pairs.eval.tsv");
  CHECK(std::filesystem::path(files[2]).filename() == "new_aan_pairs.test.tsv");
  const std::vector<SentenceSplit> splits = read_back(dir.file("set"));
  REQUIRE(splits.size() == 3);
  CHECK(splits[0].rows.size() == 160);
  CHECK(splits[1].rows.size() == 20);
  CHECK(splits[2].rows.size() == 20);
  size_t next = 0;
  for (const SentenceSplit& split : splits) {
    CHECK(split.skipped == 0);
    for (const SentenceExample& row : split.rows) {
      const AanPair& pair = data.pairs.at(next++);
      CHECK(row.has_b);
      CHECK(row.label == pair.label);
      CHECK(row.id == pair.id1 + "/" + pair.id2);
      CHECK(row.a == pair.text1);
      CHECK(row.b == pair.text2);
    }
  }
  CHECK(next == data.pairs.size());
  const std::string text = read_file(files[0]);
  CHECK(text.back() == '\n');
  CHECK(text.find('\r') == std::string::npos);
}

TEST_CASE("aan generator: balanced labels, documents of the set lengths, labels from the hidden topics") {
  const AanOptions o = small_options(5);
  const AanData data = generate_aan(o);
  REQUIRE(static_cast<int64_t>(data.pairs.size()) == o.count);
  REQUIRE(static_cast<int64_t>(data.topics.size()) == o.topics);
  const int64_t counts[] = {o.train_count(), o.eval_count(), o.test_count()};
  size_t first = 0;
  for (const int64_t n : counts) {
    int64_t positives = 0;
    for (size_t i = first; i < first + static_cast<size_t>(n); ++i) positives += data.pairs[i].label;
    CHECK(positives == n / 2);
    first += static_cast<size_t>(n);
  }
  std::map<int, int64_t> topic_counts[2];  // per label: how often each topic is text1's
  for (const AanPair& p : data.pairs) {
    CHECK((p.label == 1) == (p.topic1 == p.topic2));
    ++topic_counts[p.label][p.topic1];
    for (const std::string* text : {&p.text1, &p.text2}) {
      CHECK(static_cast<int64_t>(text->size()) >= o.min_length);
      CHECK(static_cast<int64_t>(text->size()) <= o.max_length);
      CHECK(text->front() != ' ');
      CHECK(text->back() != ' ');
      CHECK(!contains(*text, "  "));
      CHECK(text->find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789 ") == std::string::npos);
    }
    // Most characters come from the document's topic (half drawn from it, some of the rest by chance).
    CHECK(share_in(p.text1, data.topics[static_cast<size_t>(p.topic1)]) > 0.4);
    CHECK(share_in(p.text2, data.topics[static_cast<size_t>(p.topic2)]) > 0.4);
  }
  CHECK(topic_counts[0].size() >= 12);  // every label draws its topics from all 16
  CHECK(topic_counts[1].size() >= 12);
  for (const std::string& topic : data.topics) {
    CHECK(static_cast<int64_t>(topic.size()) == o.topic_chars);
    std::string sorted = topic;
    std::sort(sorted.begin(), sorted.end());
    CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());  // distinct characters
  }
}

TEST_CASE("aan generator: the same files for a seed, other files for another") {
  const test::TempDir dir("aan_seed");
  const AanOptions o = small_options(7);
  write_aan(dir.file("a"), o, generate_aan(o), false);
  write_aan(dir.file("b"), o, generate_aan(o), false);
  AanOptions other = o;
  other.seed = 8;
  write_aan(dir.file("c"), other, generate_aan(other), false);
  for (const char* name : {"new_aan_pairs.train.tsv", "new_aan_pairs.eval.tsv", "new_aan_pairs.test.tsv"}) {
    CHECK((read_file(dir.file("a/") + name) == read_file(dir.file("b/") + name)));
    CHECK((read_file(dir.file("a/") + name) != read_file(dir.file("c/") + name)));
  }
  // A larger count keeps the topics (they depend on the seed alone).
  AanOptions more = o;
  more.count = 400;
  CHECK(generate_aan(more).topics == generate_aan(o).topics);
}

TEST_CASE("aan generator: refuses impossible options, naming the option") {
  auto with = [](auto change) {
    AanOptions o;
    change(o);
    return error_of(o);
  };
  CHECK(error_of(AanOptions{}).empty());
  CHECK(error_of(small_options(1)).empty());
  CHECK(contains(with([](AanOptions& o) { o.count = 19; }), "--count 19:"));
  CHECK(contains(with([](AanOptions& o) { o.count = -5; }), "--count -5:"));
  CHECK(contains(with([](AanOptions& o) { o.count = 1'000'001; }), "--count 1000001:"));
  CHECK(contains(with([](AanOptions& o) { o.topics = 1; }), "topics 1:"));
  CHECK(contains(with([](AanOptions& o) { o.topic_chars = 37; }), "topic_chars 37:"));
  CHECK(contains(with([](AanOptions& o) { o.topic_share = 1.5; }), "topic_share"));
  CHECK(contains(with([](AanOptions& o) { o.min_length = 600; }), "min_length 600 max_length 500:"));
  CHECK_THROWS_AS(generate_aan(AanOptions{.count = 3}), ConfigError);
}

TEST_CASE("aan generator: never replaces files without overwrite, and refuses a file as the folder") {
  const test::TempDir dir("aan_out");
  const AanOptions o = small_options(3);
  const AanData data = generate_aan(o);
  const std::string out = dir.file("deep/er");
  write_aan(out, o, data, false);  // creates the missing parents
  const std::string before = read_file(out + "/new_aan_pairs.eval.tsv");
  CHECK_THROWS_AS(check_aan_output(out, false), ConfigError);
  AanOptions other = o;
  other.seed = 9;
  const AanData other_data = generate_aan(other);
  CHECK_THROWS_AS(write_aan(out, other, other_data, false), ConfigError);
  CHECK((read_file(out + "/new_aan_pairs.eval.tsv") == before));
  write_aan(out, other, other_data, true);
  CHECK((read_file(out + "/new_aan_pairs.eval.tsv") != before));
  CHECK(!std::filesystem::exists(out + "/new_aan_pairs.eval.tsv.partial"));

  // Only one of the three files there is enough to refuse.
  const std::string partial = dir.file("partial");
  std::filesystem::create_directories(partial);
  dir.write("partial/new_aan_pairs.test.tsv", "keep me\n");
  try {
    write_aan(partial, o, data, false);
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(contains(e.what(), "new_aan_pairs.test.tsv already exists"));
    CHECK(contains(e.what(), "--overwrite"));
  }
  CHECK(read_file(partial + "/new_aan_pairs.test.tsv") == "keep me\n");
  CHECK(!std::filesystem::exists(partial + "/new_aan_pairs.train.tsv"));

  const std::string file = dir.write("a_file", "x\n");
  CHECK_THROWS_AS(check_aan_output(file, true), ConfigError);
  CHECK_THROWS_AS(write_aan(file, o, data, true), ConfigError);
  AanOptions more = o;
  more.count = 400;
  CHECK_THROWS_AS(write_aan(dir.file("short"), more, data, false), ShapeError);  // 200 pairs for 400
  CHECK(!std::filesystem::exists(dir.file("short")));
}
