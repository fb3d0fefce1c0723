// GPT-2 byte-level BPE on the real encoder.json / vocab.bpe (<data root>/gpt2_bpe): ids worked out
// by hand from the merge table, the round trip over WikiText-2 raw, and corrupt vocabularies.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/readers/wikitext.h"
#include "data/text/utf8.h"
#include "data/tokenizers/gpt2_bpe.h"
#include "tests/temp_dir.h"
#include "tests/test_paths.h"

using namespace tn;

namespace {

std::string bpe_dir() { return test::data_root() + "/gpt2_bpe"; }

/// One GPT-2 BPE for the whole binary (loading takes a fraction of a second).
const Gpt2Bpe& gpt2() {
  static const Gpt2Bpe bpe = Gpt2Bpe::load(bpe_dir());
  return bpe;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// The DataError message of loading `dir`, or "" when it loads.
std::string load_error(const std::string& dir) {
  try {
    Gpt2Bpe::load(dir);
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

/// A temp folder with copies of the real files, `file` replaced by `text`.
void write_copy(const test::TempDir& tmp, const std::string& file, const std::string& text) {
  for (const char* name : {"encoder.json", "vocab.bpe"})
    tmp.write(name, name == file ? text : slurp(bpe_dir() + "/" + name));
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("gpt2 bpe: loads the real vocabulary") {
  const Gpt2Bpe& bpe = gpt2();
  CHECK(bpe.size() == 50257);
  CHECK(bpe.merge_count() == 50000);
  CHECK(bpe.token(0) == "!");
  CHECK(bpe.token(220) == "\xC4\xA0");  // "Ġ", the space byte in byte→unicode form
  CHECK(bpe.token(50256) == "<|endoftext|>");
  CHECK(bpe.decode({220}) == " ");
}

// Each case: the regex's pre-tokens; each in byte→unicode form (a space is "Ġ", é's bytes C3 A9 are
// "Ã©", ü's C3 BC are "Ã¼"), then the merges that apply, lowest rank first, as "rank (vocab.bpe line
// rank + 2)"; then the resulting tokens' ids in encoder.json. Cross-checked with a plain-Python
// GPT-2 encoder (the `regex` module, encoder.json, vocab.bpe) outside the test.
TEST_CASE("gpt2 bpe: ids worked out by hand from the merge table") {
  const Gpt2Bpe& bpe = gpt2();
  // "don't" → "don" "'t" (the contraction alternative 't). "don": pairs d·o 4342, o·n 5 → o n (5)
  // first → d·on 8843 → "don" = 9099 ("do n" is no merge). "'t": '·t 214 → "'t" = 470.
  CHECK(bpe.encode("don't") == std::vector<int32_t>{9099, 470});
  // "2019" is one \p{N}+ pre-token: pairs 2·0 982, 0·1 230, 1·9 873 → 0 1 (230) → 2·01 1008,
  // 01·9 none → 2 01 (1008) → 201·9 23088 → "2019" = 23344.
  CHECK(bpe.encode("2019") == std::vector<int32_t>{23344});
  // " 2019": Ġ·2 106 first → Ġ2 0 1 9; then 0·1 230 → Ġ2 01 9; Ġ2·01 324 → Ġ201 9; Ġ201·9 12874 →
  // "Ġ2019" = 13130.
  CHECK(bpe.encode(" 2019") == std::vector<int32_t>{13130});
  // "café" (bytes 63 61 66 C3 A9) = c a f Ã ©: pairs c·a 6632, a·f 1622, f·Ã none, Ã·© 2378 →
  // a f (1622) → c af Ã ©; c·af and af·Ã none → Ã © (2378) → c af Ã© = 66, 1878, 2634.
  CHECK(bpe.encode("café") == std::vector<int32_t>{66, 1878, 2634});
  // "Zürich" = Z Ã ¼ r i c h: i·c 35 → ic·h 232 → r·ich 7271 → Ã·¼ 8860; Z·Ã¼ and Ã¼·rich are no
  // merges → Z Ã¼ rich = 57, 9116, 7527.
  CHECK(bpe.encode("Zürich") == std::vector<int32_t>{57, 9116, 7527});
  // "a   b" → "a", "  " (\s+(?!\S) leaves the last space to the word), " b". GPT-2 has no
  // "Ġ Ġ" merge, so "  " stays Ġ Ġ = 220 220; "Ġb" is Ġ·b 19 → 275. "a" = 64.
  CHECK(bpe.encode("a   b") == std::vector<int32_t>{64, 220, 220, 275});
  // Trailing spaces "a b  ": "a", " b", then "  " at the end (\s+(?!\S) matches the whole run,
  // nothing follows) = 64, 275, 220, 220.
  CHECK(bpe.encode("a b  ") == std::vector<int32_t>{64, 275, 220, 220});
  // A line of one space and the empty line.
  CHECK(bpe.encode(" ") == std::vector<int32_t>{220});
  CHECK(bpe.encode("").empty());
  // encode appends to what is already there.
  std::vector<int32_t> out{7};
  bpe.encode("2019", out);
  CHECK(out == std::vector<int32_t>{7, 23344});
}

TEST_CASE("gpt2 bpe: decode(encode(s)) == s for every line of wiki.test.raw") {
  const Gpt2Bpe& bpe = gpt2();
  const std::vector<std::string> lines = read_lines(test::data_root() + "/wikitext-2-raw/wiki.test.raw");
  REQUIRE(lines.size() == 4358);
  size_t mismatches = 0, ids = 0;
  std::string first_bad;
  for (const std::string& line : lines) {
    const std::vector<int32_t> encoded = bpe.encode(line);
    ids += encoded.size();
    if (bpe.decode(encoded) != line && mismatches++ == 0) first_bad = line;
  }
  CHECK_MESSAGE(mismatches == 0, "first: " << first_bad);
  CHECK(ids > 250000);
  // The same through a Scratch of the caller's own, and a cache that starts cold.
  Gpt2Bpe::Scratch scratch(bpe);
  std::vector<int32_t> a, b;
  for (size_t i = 0; i < 200; ++i) {
    a.clear();
    b.clear();
    bpe.encode(lines[i], a);
    bpe.encode(lines[i], b, scratch);
    REQUIRE(a == b);
  }
}

TEST_CASE("gpt2 bpe: odd text (long runs, bytes of every width, NUL) round-trips") {
  const Gpt2Bpe& bpe = gpt2();
  for (const std::string& s : {std::string(5000, ' '), std::string(3000, 'a') + " " + std::string(300, '9'),
                               std::string("x\0y", 3), std::string("\t\t tab\r\n"), std::string("日本語のテキスト 🙂!!")})
    CHECK(bpe.decode(bpe.encode(s)) == s);
  CHECK_THROWS_AS(bpe.encode("caf\xE9"), DataError);  // Latin-1 é: not UTF-8
  CHECK_THROWS_AS(bpe.decode({50257}), DataError);
  CHECK_THROWS_AS(bpe.decode({-1}), DataError);
}

TEST_CASE("utf8: invalid_utf8_at finds the first bad byte") {
  CHECK(invalid_utf8_at("plain ascii") == std::string_view::npos);
  CHECK(invalid_utf8_at("café Zürich 🙂") == std::string_view::npos);
  CHECK(invalid_utf8_at("abc\xE9") == 3);               // Latin-1 é
  CHECK(invalid_utf8_at("abcdefghij\xC0\xAF") == 10);   // overlong '/'
  CHECK(invalid_utf8_at("\xED\xA0\x80") == 0);          // a surrogate
  CHECK(invalid_utf8_at("ok\xF4\x90\x80\x80") == 2);    // above U+10FFFF
  CHECK(invalid_utf8_at("\xE2\x82") == 0);              // cut short
}

TEST_CASE("gpt2 bpe: missing files name the path and `transnormer data fetch`") {
  const test::TempDir tmp("bpe_missing");
  const std::string no_folder = load_error(tmp.file("nothing_here"));
  CHECK(contains(no_folder, "nothing_here"));
  CHECK(contains(no_folder, "`transnormer data fetch`"));

  tmp.write("vocab.bpe", slurp(bpe_dir() + "/vocab.bpe"));
  const std::string no_encoder = load_error(tmp.path.string());
  CHECK(contains(no_encoder, tmp.file("encoder.json") + ": no such file"));
  CHECK(contains(no_encoder, "`transnormer data fetch`"));

  std::filesystem::remove(tmp.file("vocab.bpe"));
  tmp.write("encoder.json", slurp(bpe_dir() + "/encoder.json"));
  const std::string no_merges = load_error(tmp.path.string());
  CHECK(contains(no_merges, tmp.file("vocab.bpe") + ": no such file"));
}

TEST_CASE("gpt2 bpe: a corrupt encoder.json is refused with its line or key") {
  const test::TempDir tmp("bpe_encoder");
  write_copy(tmp, "encoder.json", "{\"a\": 0,\n \"b\": 1,\n \"c\" 2}\n");
  CHECK(contains(load_error(tmp.path.string()), "encoder.json:3:"));  // bad JSON: line 3
  write_copy(tmp, "encoder.json", "{\"a\": 0, \"b\": \"one\"}");
  CHECK(contains(load_error(tmp.path.string()), "key \"b\" has the id \"one\", not an integer"));
  write_copy(tmp, "encoder.json", "{\"a\": 0, \"b\": 1.5}");
  CHECK(contains(load_error(tmp.path.string()), "key \"b\" has the id 1.5"));
  write_copy(tmp, "encoder.json", "{\"a\": 0, \"b\": 0}");
  CHECK(contains(load_error(tmp.path.string()), "repeats the id 0"));
  write_copy(tmp, "encoder.json", "{\"a\": 0, \"b\": 5}");
  CHECK(contains(load_error(tmp.path.string()), "outside 0..1"));
  write_copy(tmp, "encoder.json", "[1, 2]");
  CHECK(contains(load_error(tmp.path.string()), "expected a JSON object"));
  write_copy(tmp, "encoder.json", "{\"a\": 0, \"\\u0500\": 1}");
  CHECK(contains(load_error(tmp.path.string()), "U+0500"));
  // Valid ids but not all 256 byte tokens.
  write_copy(tmp, "encoder.json", "{\"a\": 0, \"b\": 1}");
  CHECK(contains(load_error(tmp.path.string()), "for the byte 0"));
}

TEST_CASE("gpt2 bpe: a corrupt vocab.bpe is refused with file:line") {
  const test::TempDir tmp("bpe_merges");
  const std::string merges = slurp(bpe_dir() + "/vocab.bpe");
  const auto with_line = [&](size_t line, const std::string& text) {  // replaces line `line` (1-based)
    size_t start = 0;
    for (size_t i = 1; i < line; ++i) start = merges.find('\n', start) + 1;
    const size_t end = merges.find('\n', start);
    write_copy(tmp, "vocab.bpe", merges.substr(0, start) + text + merges.substr(end));
    return load_error(tmp.path.string());
  };
  const std::string path = tmp.file("vocab.bpe");
  CHECK(contains(with_line(5, "h e x"), path + ":5: expected a merge of two symbols"));
  CHECK(contains(with_line(7, "onlyone"), path + ":7: expected a merge of two symbols"));
  CHECK(contains(with_line(9, "\xC4\xA0 \xE2\x82\xAC"), path + ":9: the symbol \"€\" is not a token"));
  CHECK(contains(with_line(10, "\xC4\xA0t \xC4\xA0t"), path + ":10: the merge's result"));
  CHECK(contains(with_line(12, "\xC4\xA0 t"), path + ":12: repeats the merge of line 2"));
  CHECK(contains(with_line(1, "version 0.2"), path + ":1: expected the header"));
  write_copy(tmp, "vocab.bpe", "");
  CHECK(contains(load_error(tmp.path.string()), path + ":1: the file is empty"));
}
