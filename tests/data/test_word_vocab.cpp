#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "data/tokenizers/word_vocab.h"

using namespace tn;

TEST_CASE("word_vocab: specials first, then count descending, ties by first appearance") {
  // counts: b 3, a 2, c 2, d 1, e 1; a appears before c, d before e.
  const std::vector<std::string> lines = {"a b c", "", "  b\td  a\r", "c b e"};
  const WordVocab vocab = WordVocab::build(lines);
  CHECK(vocab.tokens() ==
        std::vector<std::string>{"<pad>", "<eos>", "<unk>", "b", "a", "c", "d", "e"});
  CHECK(vocab.size() == 8);
  CHECK(vocab.id("b") == 3);
  CHECK(vocab.id("e") == 7);
}

TEST_CASE("word_vocab: literal specials map to their ids and never enter the word list") {
  const std::vector<std::string> lines = {"<unk> x <unk> <eos>", "x <pad> y"};
  const WordVocab vocab = WordVocab::build(lines);
  CHECK(vocab.tokens() == std::vector<std::string>{"<pad>", "<eos>", "<unk>", "x", "y"});
  CHECK(vocab.id("<unk>") == WordVocab::kUnk);
  CHECK(vocab.id("<eos>") == WordVocab::kEos);
  CHECK(vocab.id("<pad>") == WordVocab::kPad);
  CHECK(vocab.id("never-seen") == WordVocab::kUnk);
  CHECK(vocab.id("X") == WordVocab::kUnk);  // case-sensitive
}

TEST_CASE("word_vocab: encode appends <eos> per line, blank lines are a lone <eos>") {
  const WordVocab vocab = WordVocab::build({"the cat", "the dog"});
  // the 2, cat 1, dog 1 -> the=3, cat=4, dog=5
  const std::vector<int32_t> ids = vocab.encode({" ", "the  bird\v\fcat", "", "dog the"});
  CHECK(ids == std::vector<int32_t>{1, 3, 2, 4, 1, 1, 5, 3, 1});
  CHECK(vocab.encode({}).empty());
}

TEST_CASE("word_vocab: from_tokens round-trips and validates") {
  const WordVocab built = WordVocab::build({"z y z", "ünïcödé y z"});
  const WordVocab stored = WordVocab::from_tokens(built.tokens());
  CHECK(stored.tokens() == built.tokens());
  CHECK(stored.id("ünïcödé") == built.id("ünïcödé"));
  CHECK(stored.encode({"z ünïcödé q"}) == built.encode({"z ünïcödé q"}));

  CHECK_THROWS_AS(WordVocab::from_tokens({"<pad>", "<eos>"}), DataError);
  CHECK_THROWS_AS(WordVocab::from_tokens({"<eos>", "<pad>", "<unk>", "a"}), DataError);
  CHECK_THROWS_AS(WordVocab::from_tokens({"<pad>", "<eos>", "<unk>", "a", "b", "a"}), DataError);
  CHECK_THROWS_AS(WordVocab::from_tokens({"<pad>", "<eos>", "<unk>", "<unk>"}), DataError);
  CHECK(WordVocab::from_tokens({"<pad>", "<eos>", "<unk>"}).size() == 3);
}

TEST_CASE("word_vocab: the reference selftest's synthetic file") {
  // selftest "data protocol": file " b a b\n \n a c <unk> a\n", then "zzz" appended as OOV.
  const std::vector<std::string> lines = {" b a b", " ", " a c <unk> a"};
  const WordVocab vocab = WordVocab::build(lines);
  CHECK(vocab.tokens() == std::vector<std::string>{"<pad>", "<eos>", "<unk>", "a", "b", "c"});
  const std::vector<int32_t> ids = vocab.encode(lines);
  CHECK(ids == std::vector<int32_t>{4, 3, 4, 1, 1, 3, 5, 2, 3, 1});
  CHECK(vocab.encode({"zzz"}) == std::vector<int32_t>{WordVocab::kUnk, WordVocab::kEos});
}
