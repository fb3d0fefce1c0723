// RoBERTa's sentence and pair layout with longest-first truncation (data/tokenizers/roberta_input.h).
#include <doctest/doctest.h>

#include <vector>

#include "core/error.h"
#include "data/tokenizers/roberta_input.h"

using namespace tn;
using V = std::vector<int32_t>;

TEST_CASE("roberta input: <s> a </s> and <s> a </s></s> b </s>") {
  V out;
  roberta_input({10, 11}, nullptr, 512, 0, 2, out);
  CHECK(out == V{0, 10, 11, 2});
  const V b = {20};
  roberta_input({10, 11}, &b, 512, 0, 2, out);
  CHECK(out == V{0, 10, 11, 2, 2, 20, 2});
}

TEST_CASE("roberta input: longest first truncation keeps each text's beginning") {
  V out;
  const V a = {10, 11, 12, 13, 14, 15}, b = {20, 21};
  // Room 10 - 4 = 6 for 6 + 2 ids: the two come off the longer a.
  roberta_input(a, &b, 10, 0, 2, out);
  CHECK(out == V{0, 10, 11, 12, 13, 2, 2, 20, 21, 2});
  // Room 3: a is cut to 2 (equal to b), then a on the tie, leaving a = 1, b = 2.
  roberta_input(a, &b, 7, 0, 2, out);
  CHECK(out == V{0, 10, 2, 2, 20, 21, 2});
  // One text: the tail goes.
  roberta_input(a, nullptr, 4, 0, 2, out);
  CHECK(out == V{0, 10, 11, 2});
  CHECK_THROWS_AS(roberta_input(a, &b, 5, 0, 2, out), ShapeError);
}
