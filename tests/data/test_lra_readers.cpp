// The LRA readers on small files in the exact published formats, with hand-computed expectations:
// listops (Source<TAB>Target with parenthesised expressions), aan (5 columns, no header), imdb (the
// aclImdb tree as an archive, a folder, or two archives), the symbol vocabulary (torchtext's order)
// and tokenizers, and every malformed input a DataError naming the file and line or entry.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/platform/config/json_section.h"
#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "data/readers/aan.h"
#include "data/readers/imdb.h"
#include "data/readers/imdb_spec.h"
#include "data/readers/listops.h"
#include "data/readers/registry.h"
#include "data/tokenizers/symbol_vocab.h"
#include "tests/data_error.h"
#include "tests/temp_dir.h"
#include "tests/test_paths.h"

using namespace tn;
using nlohmann::json;
using tn::test::data_error;

namespace {

std::vector<std::string> views(const std::vector<std::string_view>& v) { return {v.begin(), v.end()}; }

}  // namespace

TEST_CASE("symbol vocab: specials first, then by descending count, ties in code-point order") {
  const std::unordered_map<std::string, int64_t> counts = {{"b", 3}, {"a", 3}, {"é", 5}, {"z", 1}, {"c", 2}};
  const SymbolVocab v = SymbolVocab::build(counts, 2);
  CHECK(v.symbols() == std::vector<std::string>{"<pad>", "<unk>", "<eos>", "é", "a", "b", "c"});
  CHECK(v.id("a") == 4);
  CHECK(v.id("z") == SymbolVocab::kUnk);  // below min_freq
  CHECK(v.find("z") == -1);
  CHECK(SymbolVocab::build(counts, 1).size() == 8);
  CHECK_THROWS_AS(SymbolVocab::from_symbols({"<pad>", "<eos>", "<unk>"}), DataError);
  CHECK_THROWS_AS(SymbolVocab::from_symbols({"<pad>", "<unk>", "<eos>", "a", "a"}), DataError);
}

TEST_CASE("symbol tokenizers: code points and ListOps symbols") {
  std::vector<std::string_view> out;
  split_code_points("aé日😀 b", out);
  CHECK(views(out) == std::vector<std::string>{"a", "é", "日", "😀", " ", "b"});
  split_listops("( ( ( [MAX 2 ) ( ( [MIN 4 ) 6 ) ] ) ) ] )", out);
  CHECK(views(out) == std::vector<std::string>{"[MAX", "2", "[MIN", "4", "6", "]", "]"});
}

TEST_CASE("listops: a well-formed expression and each kind of malformed one") {
  CHECK(listops_problem("( ( ( [MAX 2 ) 9 ) ] )").empty());
  CHECK(listops_problem("( ( ( [SM ( ( ( [MED 1 ) 2 ) ] ) ) 3 ) ] )").empty());
  CHECK(listops_problem("( ( [MAX 2 ) 9 ) ] )").find("`)` closes no `(`") != std::string::npos);
  CHECK(listops_problem("( ( ( [MAX 2 ) 9 ) ] ").find("left open") != std::string::npos);
  CHECK(listops_problem("[MAX 2 9").find("without their closing") != std::string::npos);
  CHECK(listops_problem("[MAX 2 ] ]").find("after the outermost") != std::string::npos);
  CHECK(listops_problem("[MAX ]").find("no argument") != std::string::npos);
  CHECK(listops_problem("[FIRST 2 ]").find("unknown symbol `[FIRST`") != std::string::npos);
  // Balanced parentheses in the wrong places: the official layout is ( ( ( [MAX 2 ) 3 ) ] ).
  CHECK(listops_problem("( ( ( [MAX 2 ) 3 ) ] )").empty());
  CHECK(listops_problem("( [MAX 2 3 ) ]").find("out of the official layout at token 2 (expected `(`") != std::string::npos);
  CHECK(listops_problem("( ( ( [MAX 2 3 ) ) ] )").find("at token 6 (expected `)`, found `3`") != std::string::npos);
  CHECK(listops_problem("( ( ( [MAX 2 ) 3 ) ] ) ( )").find("after the expression ends") != std::string::npos);
}

TEST_CASE("listops: reads the official TSV layout") {
  test::TempDir tmp("listops");
  const std::string path = tmp.write("basic_val.tsv",
                                     "Source\tTarget\n"
                                     "( ( ( [MAX 2 ) 9 ) ] )\t9\n"
                                     "( ( ( [SM 8 ) 7 ) ] )\t5\n");
  const SentenceSplit s = read_listops_split(path, "valid", SentenceSplit::Role::Valid);
  REQUIRE(s.rows.size() == 2);
  CHECK(s.rows[0].a == "( ( ( [MAX 2 ) 9 ) ] )");
  CHECK(s.rows[0].label == 9);
  CHECK(s.rows[1].label == 5);
  CHECK(s.rows[1].line == 3);
  CHECK(s.rows[1].id == "1");
}

TEST_CASE("listops: malformed files name the file and line") {
  test::TempDir tmp("listops_bad");
  const auto err = [&](const std::string& text) {
    const std::string path = tmp.write("f.tsv", text);
    return data_error([&] { read_listops_split(path, "train", SentenceSplit::Role::Train); });
  };
  CHECK(err("Source\tTarget\n( ( [MAX 2 ) ] )  9\n").find("f.tsv:2: expected 2 tab-separated columns") !=
        std::string::npos);
  CHECK(err("Source\tTarget\n( ( [MAX 2 ) ] )\t10\n").find("f.tsv:2: target \"10\" is not a value 0-9") !=
        std::string::npos);
  CHECK(err("Source\tTarget\n( ( [MAX 2 ) ] )\t2\n( ( [MAX 2 ) ] \t2\n").find("f.tsv:3: malformed expression") !=
        std::string::npos);
  CHECK(err("( ( [MAX 2 ) ] )\t2\n").find("f.tsv:1: expected the header") != std::string::npos);
  CHECK(err("Source\tTarget\n").find("has no rows") != std::string::npos);
  CHECK(err("").find("is empty") != std::string::npos);
}

TEST_CASE("aan: five columns, labels 0/1 or 0.0/1.0, pairs") {
  test::TempDir tmp("aan");
  const std::string path = tmp.write("new_aan_pairs.eval.tsv", "1.0\tP00-1001\tW99-0203\tFirst doc.\tSecond doc.\n"
                                                              "0\tA\tB\tx\ty z\n");
  const SentenceSplit s = read_aan_split(path, "valid", SentenceSplit::Role::Valid);
  REQUIRE(s.rows.size() == 2);
  CHECK(s.rows[0].label == 1);
  CHECK(s.rows[0].has_b);
  CHECK(s.rows[0].a == "First doc.");
  CHECK(s.rows[0].b == "Second doc.");
  CHECK(s.rows[0].id == "P00-1001/W99-0203");
  CHECK(s.rows[1].label == 0);
  const auto err = [&](const std::string& text) {
    const std::string p = tmp.write("bad.tsv", text);
    return data_error([&] { read_aan_split(p, "train", SentenceSplit::Role::Train); });
  };
  CHECK(err("1\tA\tB\tx\n").find("bad.tsv:1: expected 5 tab-separated columns") != std::string::npos);
  CHECK(err("0\tA\tB\tx\ty\n2\tA\tB\tx\ty\n").find("bad.tsv:2: label \"2\" is not 0 or 1") != std::string::npos);
  CHECK(err("1\tA\tB\t\ty\n").find("bad.tsv:1: text1 is empty") != std::string::npos);
}

namespace {
/// A miniature aclImdb tree under `root`: train 2 pos + 1 neg (+ unsup and README, skipped),
/// test 1 pos + 1 neg.
void write_imdb_tree(const test::TempDir& tmp) {
  for (const char* d : {"aclImdb/train/pos", "aclImdb/train/neg", "aclImdb/train/unsup", "aclImdb/test/pos",
                        "aclImdb/test/neg"})
    std::filesystem::create_directories(tmp.path / "src" / d);
  tmp.write("src/aclImdb/README", "readme");
  tmp.write("src/aclImdb/train/pos/10_9.txt", "Great film.<br />Loved it");
  tmp.write("src/aclImdb/train/pos/2_7.txt", "Fine é");
  tmp.write("src/aclImdb/train/neg/5_1.txt", "Bad.");
  tmp.write("src/aclImdb/train/unsup/0_0.txt", "no label");
  tmp.write("src/aclImdb/test/pos/0_10.txt", "Wow");
  tmp.write("src/aclImdb/test/neg/3_2.txt", "Meh");
}

int run(const std::string& command) { return std::system(command.c_str()); }
}  // namespace

TEST_CASE("imdb: the archive, the folder and split archives read the same reviews") {
  test::TempDir tmp("imdb");
  write_imdb_tree(tmp);
  const std::string src = (tmp.path / "src").string();
  REQUIRE(run("tar -czf " + tmp.file("aclImdb_v1.tar.gz") + " -C " + src + " aclImdb") == 0);
  std::filesystem::create_directories(tmp.path / "split");
  REQUIRE(run("tar -cJf " + tmp.file("split/aclImdb_train.tar.xz") + " -C " + src + " aclImdb/train aclImdb/README") == 0);
  REQUIRE(run("tar -cJf " + tmp.file("split/aclImdb_test.tar.xz") + " -C " + src + " aclImdb/test") == 0);
  for (const std::string& path : {tmp.file("aclImdb_v1.tar.gz"), src, src + "/aclImdb", tmp.file("split")}) {
    CAPTURE(path);
    const ImdbReviews r = read_imdb(path);
    REQUIRE(r.train.size() == 3);
    REQUIRE(r.test.size() == 2);
    // Sorted by (label, id, rating): neg first.
    CHECK(r.train[0].id == "train/neg/5_1");
    CHECK(r.train[0].label == 0);
    CHECK(r.train[1].id == "train/pos/2_7");
    CHECK(r.train[1].a == "Fine é");
    CHECK(r.train[2].a == "Great film.<br />Loved it");
    CHECK(r.train[2].label == 1);
    CHECK(r.test[1].id == "test/pos/0_10");
  }
}

TEST_CASE("imdb: truncated or empty archives and missing labels are errors naming the path") {
  test::TempDir tmp("imdb_bad");
  write_imdb_tree(tmp);
  const std::string src = (tmp.path / "src").string();
  REQUIRE(run("tar -czf " + tmp.file("full.tar.gz") + " -C " + src + " aclImdb") == 0);
  const std::string bytes = read_file(tmp.file("full.tar.gz"));
  tmp.write("cut.tar.gz", bytes.substr(0, bytes.size() / 2));
  CHECK(data_error([&] { read_imdb(tmp.file("cut.tar.gz")); }).find("cut.tar.gz") != std::string::npos);
  REQUIRE(run("tar -czf " + tmp.file("nopos.tar.gz") + " -C " + src + " aclImdb/train/neg aclImdb/test") == 0);
  CHECK(data_error([&] { read_imdb(tmp.file("nopos.tar.gz")); }).find("holds no aclImdb/train/pos") !=
        std::string::npos);
  CHECK(data_error([&] { read_imdb(tmp.file("absent.tar.gz")); }).find("no such file") != std::string::npos);
  // Two copies of one archive in the folder: every review would count twice; refused, naming both.
  std::filesystem::create_directories(tmp.path / "dup");
  std::filesystem::copy_file(tmp.file("full.tar.gz"), tmp.file("dup/a.tar.gz"));
  std::filesystem::copy_file(tmp.file("full.tar.gz"), tmp.file("dup/copy of a.tar.gz"));
  CHECK(data_error([&] { read_imdb(tmp.file("dup")); }).find("twice") != std::string::npos);
  // A file name that is not <id>_<rating> (an id too long for aclImdb) is not a review: skipped.
  tmp.write("src/aclImdb/train/neg/99999999999999999999_1.txt", "not a review");
  CHECK(read_imdb(src).train.size() == 3);
  tmp.write("src/aclImdb/test/neg/4_1.txt", std::string("bad \xff byte"));
  CHECK(data_error([&] { read_imdb(src); }).find("4_1.txt: is not valid UTF-8") != std::string::npos);
}

TEST_CASE("imdb spec: holdout takes a fixed share of train, valid: test reuses the test reviews") {
  test::TempDir tmp("imdb_spec");
  write_imdb_tree(tmp);
  const std::string src = (tmp.path / "src").string();
  const auto resolve = [](const json& j) { return resolve_data_spec(JsonSection(j, "data")); };
  auto holdout = resolve(json{{"reader", "imdb"}, {"path", src}, {"valid_fraction", 0.34}});
  const auto* h = dynamic_cast<const SentenceSource*>(holdout.get());
  std::vector<SentenceSplit> s = h->read_sentences("/unused");
  REQUIRE(s.size() == 3);
  CHECK(s[0].rows.size() == 2);  // 3 train reviews, round(0.34 · 3) = 1 held out
  CHECK(s[1].name == "valid");
  CHECK(s[1].rows.size() == 1);
  CHECK(s[2].rows.size() == 2);
  auto official = resolve(json{{"reader", "imdb"}, {"path", src}, {"valid", "test"}});
  s = dynamic_cast<const SentenceSource*>(official.get())->read_sentences("/unused");
  CHECK(s[0].rows.size() == 3);
  CHECK(s[1].rows.size() == 2);
  CHECK(s[1].rows[0].id == s[2].rows[0].id);
  CHECK(official->to_json()["tokenizer"].dump() == R"({"type":"char","min_freq":15})");
  // test: false with a held-out validation: the test reviews are never read, so they need not exist
  // (an archive of aclImdb/train alone trains).
  REQUIRE(run("tar -czf " + tmp.file("train_only.tar.gz") + " -C " + src + " aclImdb/train") == 0);
  CHECK(data_error([&] { read_imdb(tmp.file("train_only.tar.gz")); }).find("holds no aclImdb/test/") != std::string::npos);
  CHECK(read_imdb(tmp.file("train_only.tar.gz"), false).test.empty());
  auto no_test = resolve(json{{"reader", "imdb"}, {"path", tmp.file("train_only.tar.gz")}, {"valid_fraction", 0.34}, {"test", false}});
  s = dynamic_cast<const SentenceSource*>(no_test.get())->read_sentences("/unused");
  REQUIRE(s.size() == 2);
  CHECK(s[0].rows.size() == 2);
  CHECK(s[1].name == "valid");
  auto test_needed = resolve(json{{"reader", "imdb"}, {"path", tmp.file("train_only.tar.gz")}, {"valid", "test"}, {"test", false}});
  CHECK(data_error([&] { dynamic_cast<const SentenceSource*>(test_needed.get())->read_sentences("/unused"); })
            .find("holds no aclImdb/test/") != std::string::npos);
  // A tokenizer mapping without `type` keeps the reader's own tokenizer (char), only min_freq changes.
  auto rare = resolve(json{{"reader", "imdb"}, {"tokenizer", {{"min_freq", 3}}}});
  CHECK(rare->to_json()["tokenizer"].dump() == R"({"type":"char","min_freq":3})");
  CHECK_THROWS_AS(resolve(json{{"reader", "imdb"}, {"valid_fraction", 1.5}}), ConfigIssue);
  CHECK_THROWS_AS(resolve(json{{"reader", "imdb"}, {"tokenizer", "gpt2"}}), ConfigIssue);
}

TEST_CASE("imdb: the real reviews of the data root, 12,500 per label and split") {
  const std::string dir = test::data_root() + "/lra/imdb";
  INFO(dir << " is not present; run scripts/fetch_data.sh or set TRANSNORMER_DATA");
  REQUIRE(std::filesystem::exists(dir));
  const ImdbReviews r = read_imdb(dir);
  REQUIRE(r.train.size() == 25000);
  REQUIRE(r.test.size() == 25000);
  int64_t pos = 0, longer = 0;
  for (const SentenceExample& e : r.train) {
    pos += e.label;
    std::vector<std::string_view> chars;
    split_code_points(e.a, chars);
    longer += chars.size() > 4095;
  }
  CHECK(pos == 12500);
  CHECK(longer == 727);  // the count LRA's notes give: 727 train reviews are cut at 4,095 characters
}
