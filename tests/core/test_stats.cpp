// Summaries of repeated measurements (core/runtime/math/stats.h).
#include <doctest/doctest.h>

#include "core/runtime/math/stats.h"

using namespace tn;

TEST_CASE("median_of: middle value, mean of the two middle ones, 0 for none") {
  CHECK(median_of({5.0, 1.0, 3.0}) == 3.0);
  CHECK(median_of({4.0, 1.0, 3.0, 2.0}) == 2.5);
  CHECK(median_of({7.0}) == 7.0);
  CHECK(median_of({}) == 0.0);
}
