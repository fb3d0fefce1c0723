#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/error.h"
#include "data/metrics/unigram.h"

using namespace tn;

TEST_CASE("unigram: add-one smoothed over the training ids, scored on eval ids[1:]") {
  // train counts over V = 4: {0: 0, 1: 2, 2: 1, 3: 1}, N = 4 -> p = (c + 1) / 8.
  const std::vector<int32_t> train = {1, 2, 1, 3};
  const std::vector<int32_t> eval = {0, 1, 0, 3};  // targets 1, 0, 3: p = 3/8, 1/8, 2/8
  const double expected = std::exp(-(std::log(3.0 / 8) + std::log(1.0 / 8) + std::log(2.0 / 8)) / 3);
  CHECK(unigram_ppl(train, eval, 4) == doctest::Approx(expected).epsilon(1e-14));

  // The reference selftest's case: targets 3, 5 with p = 3/10, 1/10 -> (0.03)^-1/2.
  CHECK(unigram_ppl({3, 3, 4, 1}, {1, 3, 5}, 6) == doctest::Approx(std::pow(0.03, -0.5)).epsilon(1e-14));

  // A uniform model: empty training data gives ppl = V.
  CHECK(unigram_ppl({}, {0, 1, 2}, 5) == doctest::Approx(5.0).epsilon(1e-14));

  CHECK_THROWS_AS(unigram_ppl(train, {1}, 4), ShapeError);
  CHECK_THROWS_AS(unigram_ppl(train, {1, 4}, 4), ShapeError);
  CHECK_THROWS_AS(unigram_ppl({-1}, {1, 2}, 4), ShapeError);
  CHECK_THROWS_AS(unigram_ppl(train, eval, 0), ShapeError);
}

TEST_CASE("unigram: pairwise summation agrees with a compensated sum on long streams") {
  std::vector<int32_t> train, eval;
  for (int64_t i = 0; i < 5000; ++i) train.push_back(static_cast<int32_t>((i * 7919) % 97));
  for (int64_t i = 0; i < 100003; ++i) eval.push_back(static_cast<int32_t>((i * 104729) % 100));
  std::vector<double> counts(100, 0.0);
  for (int32_t id : train) counts[id] += 1;
  long double sum = 0;
  for (size_t i = 1; i < eval.size(); ++i)
    sum += std::log((counts[eval[i]] + 1.0L) / (train.size() + 100.0L));
  const double expected = static_cast<double>(std::exp(-sum / (eval.size() - 1)));
  CHECK(unigram_ppl(train, eval, 100) == doctest::Approx(expected).epsilon(1e-12));
}
