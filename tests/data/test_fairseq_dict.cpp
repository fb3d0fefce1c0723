// fairseq's GPT-2 dict.txt (<data root>/gpt2_bpe/dict.txt) and the codec joining it to the BPE.
#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/tokenizers/gpt2_codec.h"
#include "tests/temp_dir.h"
#include "tests/test_paths.h"

using namespace tn;

namespace {

std::string bpe_dir() { return test::data_root() + "/gpt2_bpe"; }

const Gpt2Codec& codec() {
  static const Gpt2Codec c = Gpt2Codec::load(bpe_dir(), bpe_dir() + "/dict.txt");
  return c;
}

std::string dict_error(const std::string& path) {
  try {
    FairseqDict::load(path, codec().bpe);
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string real_dict() {
  std::ifstream in(bpe_dir() + "/dict.txt", std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("fairseq dict: the real dict.txt has RoBERTa's 50,265 ids") {
  const FairseqDict& dict = codec().dict;
  CHECK(dict.size() == 50265);
  CHECK(dict.mask() == 50264);
  CHECK(dict.bos() == 0);
  CHECK(dict.pad() == 1);
  CHECK(dict.eos() == 2);
  CHECK(dict.unk() == 3);
  // The file's first line is "13 850314647": GPT-2 id 13 (".") becomes model id 4.
  CHECK(dict.index_of_bpe(13) == 4);
  CHECK(dict.bpe_of(4) == 13);
  CHECK(dict.index_of_bpe(262) == 5);  // second line "262 ..."
  CHECK(dict.bpe_of(50261) == -1);     // madeupword0000..0002 are 50261..50263
  CHECK(dict.bpe_of(50264) == -1);
  CHECK(dict.bpe_of(0) == -1);
  CHECK_THROWS_AS(dict.bpe_of(50265), DataError);
  CHECK(dict.is_special(0));
  CHECK(dict.is_special(50264));
  CHECK_FALSE(dict.is_special(4));
  CHECK_FALSE(dict.is_special(50261));
  const std::vector<std::string> symbols = dict.symbols();
  REQUIRE(symbols.size() == 50265);
  CHECK(symbols[0] == "<s>");
  CHECK(symbols[3] == "<unk>");
  CHECK(symbols[4] == "13");
  CHECK(symbols[50263] == "madeupword0002");
  CHECK(symbols[50264] == "<mask>");
  // Every GPT-2 id has a model id and back.
  for (int32_t id = 0; id < codec().bpe.size(); ++id) REQUIRE(dict.bpe_of(dict.index_of_bpe(id)) == id);
}

TEST_CASE("fairseq dict: the codec maps text to model ids and back, skipping specials") {
  const Gpt2Codec& c = codec();
  std::vector<int32_t> ids;
  c.encode_line("don't", ids);  // GPT-2 9099 470
  REQUIRE(ids.size() == 2);
  CHECK(ids[0] == c.dict.index_of_bpe(9099));
  CHECK(ids[1] == c.dict.index_of_bpe(470));
  CHECK(c.decode_ids(ids) == "don't");
  std::vector<int32_t> with_specials = {c.dict.bos()};
  with_specials.insert(with_specials.end(), ids.begin(), ids.end());
  with_specials.push_back(c.dict.eos());
  with_specials.push_back(c.dict.mask());
  with_specials.push_back(50261);  // madeupword0000
  CHECK(c.decode_ids(with_specials) == "don't");
  CHECK_THROWS_AS(c.decode_ids({50265}), DataError);
}

TEST_CASE("fairseq dict: malformed, duplicate, foreign and mismatched dictionaries name the line") {
  const test::TempDir tmp("fairseq_dict");
  CHECK(contains(dict_error(tmp.write("a.txt", "13 5\n262\n")), "a.txt:2: expected \"SYMBOL COUNT\""));
  CHECK(contains(dict_error(tmp.write("b.txt", "13 5\n262 x\n")), "b.txt:2: expected \"SYMBOL COUNT\""));
  CHECK(contains(dict_error(tmp.write("c.txt", "13 5\n262 4\n13 3\n")), "c.txt:3: the symbol \"13\" repeats line 1"));
  CHECK(contains(dict_error(tmp.write("d.txt", "13 5\nthe 4\n")), "d.txt:2: the symbol \"the\" is neither a GPT-2 id"));
  CHECK(contains(dict_error(tmp.write("e.txt", "13 5\n50257 4\n")), "e.txt:2: the symbol \"50257\""));
  CHECK(contains(dict_error(tmp.write("f.txt", "13 5\n013 4\n")), "f.txt:2: the symbol \"013\""));
  CHECK(contains(dict_error(tmp.file("missing.txt")), "missing.txt: no such file"));
  // The real dictionary without its line for GPT-2 id 262 (the second line): one id missing.
  std::string text = real_dict();
  const size_t second = text.find('\n') + 1;
  text.erase(second, text.find('\n', second) + 1 - second);
  const std::string message = dict_error(tmp.write("dict.txt", text));
  CHECK(contains(message, "dict.txt: does not match the GPT-2 vocabulary of 50257 tokens"));
  CHECK(contains(message, "1 GPT-2 id is missing from it, the first 262"));
}
