// The quickstart's data protocol on the real WikiText-103 valid/test files (datasets/README.md "The
// quickstart's language-model protocol"); the expected numbers were also recomputed with
// the reference's read_lines / words_of_lines / build_vocab / unigram_ppl.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "data/batching/batch_stream.h"
#include "data/batching/lm_blocks.h"
#include "data/metrics/unigram.h"
#include "data/readers/wikitext.h"
#include "data/tokenizers/word_vocab.h"
#include "tests/test_paths.h"

using namespace tn;

TEST_CASE("wikitext-103 quickstart protocol: counts, vocabulary, blocks and unigram ppl") {
  const std::string root = test::data_root() + "/wikitext-103";
  const std::vector<std::string> lines = read_lines(root + "/wiki.valid.tokens");
  CHECK(lines.size() == 3760);

  const WordVocab full_vocab = WordVocab::build(lines);
  CHECK(full_vocab.encode(lines).size() == 217646);

  auto [train_lines, valid_lines] = split_valid_from_train(lines, 0.1);
  CHECK(train_lines.size() == 3384);
  CHECK(valid_lines.size() == 376);

  const WordVocab vocab = WordVocab::build(train_lines);
  CHECK(vocab.size() == 17488);
  CHECK(std::vector<std::string>(vocab.tokens().begin(), vocab.tokens().begin() + 12) ==
        std::vector<std::string>{"<pad>", "<eos>", "<unk>", "the", ",", ".", "of", "and", "in",
                                 "to", "a", "="});
  CHECK(vocab.tokens().back() == "Dollar");

  LmBlocks blocks{vocab.encode(train_lines), 256};
  CHECK(blocks.stream.size() == 195890);
  CHECK(std::vector<int32_t>(blocks.stream.begin(), blocks.stream.begin() + 10) ==
        std::vector<int32_t>{1, 11, 1487, 756, 11, 1, 1, 1487, 756, 4});
  CHECK(blocks.count() == 766);
  CHECK(blocks.targets(765) == 49);  // the last block has 50 ids
  CHECK(blocks.total_targets() == 195889);

  const std::vector<int32_t> valid = vocab.encode(valid_lines);
  CHECK(valid.size() == 21756);
  const std::vector<int32_t> test_ids = vocab.encode(read_lines(root + "/wiki.test.tokens"));
  CHECK(test_ids.size() == 245569);

  int64_t unk = 0;
  for (int32_t id : test_ids) unk += id == WordVocab::kUnk;
  CHECK(unk == 27248);

  // datasets/README.md: unigram test ppl 714.95, valid 696.80 (reference: 714.952324687903, 696.8016864616178).
  CHECK(unigram_ppl(blocks.stream, test_ids, vocab.size()) ==
        doctest::Approx(714.952324687903).epsilon(1e-12));
  CHECK(unigram_ppl(blocks.stream, valid, vocab.size()) ==
        doctest::Approx(696.8016864616178).epsilon(1e-12));

  // The first training batch of seed 1 holds 8 full blocks.
  LmBatch batch;
  const std::vector<int64_t> order = epoch_order(blocks.count(), 1, 0);
  make_batch(blocks, std::vector<int64_t>(order.begin(), order.begin() + 8), batch);
  CHECK(batch.rows == 8);
  CHECK(batch.seq_len == 256);
  CHECK(batch.n_targets == 8 * 256);
}
