// Length-sorted batching: coverage, limits, determinism per (seed, epoch), and the padding it
// saves on real SST-2 train lengths.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/batching/length_batches.h"
#include "data/batching/batch_stream.h"
#include "data/batching/lm_blocks.h"
#include "data/readers/glue.h"
#include "tests/test_paths.h"

using namespace tn;

namespace {

std::vector<int64_t> lengths_of(size_t n, uint64_t salt) {
  std::vector<int64_t> lengths(n);
  for (size_t i = 0; i < n; ++i) lengths[i] = static_cast<int64_t>((i * 7919 + salt * 104729) % 61) + 1;
  return lengths;
}

/// Every index in [0, n) exactly once.
bool covers_once(const std::vector<std::vector<int64_t>>& batches, size_t n) {
  std::vector<int> seen(n, 0);
  for (const auto& batch : batches)
    for (int64_t index : batch) {
      if (index < 0 || static_cast<size_t>(index) >= n) return false;
      ++seen[static_cast<size_t>(index)];
    }
  return std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; });
}

int64_t whitespace_words(const std::string& text) {
  std::istringstream in(text);
  int64_t n = 0;
  for (std::string word; in >> word;) ++n;
  return n;
}

}  // namespace

TEST_CASE("length batches: every index once per epoch, within the limits, deterministic per (seed, epoch)") {
  const std::vector<int64_t> lengths = lengths_of(1003, 1);
  const BatchLimits limits{.max_sentences = 16};
  for (uint64_t epoch = 0; epoch < 3; ++epoch) {
    const auto batches = length_batches(lengths, limits, 7, epoch);
    CHECK(covers_once(batches, lengths.size()));
    for (const auto& batch : batches) {
      CHECK(!batch.empty());
      CHECK(batch.size() <= 16);
      CHECK(std::is_sorted(batch.begin(), batch.end(),
                           [&](int64_t a, int64_t b) { return lengths[a] < lengths[b]; }));
    }
    CHECK(length_batches(lengths, limits, 7, epoch) == batches);  // a resumed run replays it
  }
  CHECK(length_batches(lengths, limits, 7, 0) != length_batches(lengths, limits, 7, 1));
  CHECK(length_batches(lengths, limits, 7, 0) != length_batches(lengths, limits, 8, 0));
  CHECK(length_batches({}, limits, 1, 0).empty());
}

TEST_CASE("length batches: equal lengths keep the epoch_order shuffle") {
  // All lengths equal: the stable sort changes nothing, so the concatenated batches before the
  // batch shuffle are epoch_order's permutation; the batch shuffle then moves whole batches.
  const std::vector<int64_t> lengths(10, 5);
  const auto batches = length_batches(lengths, {.max_sentences = 10}, 1, 0);
  REQUIRE(batches.size() == 1);
  CHECK(batches[0] == epoch_order(10, 1, 0));
}

TEST_CASE("length batches: the token budget bounds padded positions, and an over-long example is refused") {
  const std::vector<int64_t> lengths = lengths_of(500, 2);
  const BatchLimits limits{.max_sentences = 64, .max_tokens = 300};
  const auto batches = length_batches(lengths, limits, 3, 0);
  CHECK(covers_once(batches, lengths.size()));
  for (const auto& batch : batches) {
    int64_t longest = 0;
    for (int64_t index : batch) longest = std::max(longest, lengths[index]);
    CHECK(longest * static_cast<int64_t>(batch.size()) <= 300);
  }
  CHECK_THROWS_AS(length_batches({10, 400}, limits, 0, 0), ConfigError);
  CHECK_THROWS_AS(length_batches({10}, {.max_sentences = 0}, 0, 0), ShapeError);
  CHECK_THROWS_AS(length_batches({-1}, limits, 0, 0), ShapeError);
}

TEST_CASE("length batches: eval batches are sorted by length and not shuffled") {
  const std::vector<int64_t> lengths = lengths_of(257, 3);
  const auto batches = eval_batches(lengths, {.max_sentences = 32});
  CHECK(covers_once(batches, lengths.size()));
  std::vector<int64_t> flat;
  for (const auto& batch : batches) flat.insert(flat.end(), batch.begin(), batch.end());
  CHECK(std::is_sorted(flat.begin(), flat.end(), [&](int64_t a, int64_t b) {
    return lengths[a] != lengths[b] ? lengths[a] < lengths[b] : a < b;
  }));
  CHECK(eval_batches(lengths, {.max_sentences = 32}) == batches);
}

TEST_CASE("length batches: padding fraction") {
  CHECK(padding_fraction({2, 4}, {{0, 1}}) == doctest::Approx(0.25));  // 6 real of 8
  CHECK(padding_fraction({2, 4}, {{0}, {1}}) == 0.0);
  CHECK(padding_fraction({}, {}) == 0.0);
  CHECK_THROWS_AS(padding_fraction({1}, {{3}}), ShapeError);
}

TEST_CASE("length batches: under 10% padding on SST-2 train at batch size 32") {
  const std::string path = test::data_root() + "/glue/SST-2/train.tsv";
  INFO(path << " is not present; run scripts/fetch_data.sh or set TRANSNORMER_DATA");
  REQUIRE(std::filesystem::exists(path));
  const SentenceSplit train = read_glue_split(*find_glue_task("SST-2"), GlueFileKind::Train, path);
  std::vector<int64_t> lengths;
  for (const SentenceExample& row : train.rows) lengths.push_back(whitespace_words(row.a) + 2);  // a BPE stand-in
  const auto batches = length_batches(lengths, {.max_sentences = 32}, 1, 0);
  CHECK(covers_once(batches, lengths.size()));
  const double sorted = padding_fraction(lengths, batches);
  std::vector<std::vector<int64_t>> unsorted;  // the same sizes in file order, for comparison
  for (size_t start = 0; start < lengths.size(); start += 32) {
    unsorted.emplace_back();
    for (size_t i = start; i < std::min(lengths.size(), start + 32); ++i) unsorted.back().push_back(static_cast<int64_t>(i));
  }
  const double plain = padding_fraction(lengths, unsorted);
  MESSAGE("SST-2 train, " << lengths.size() << " examples, " << batches.size()
                          << " batches of <= 32: padding fraction " << sorted << " length-sorted, " << plain
                          << " in file order");
  CHECK(sorted < 0.10);
  CHECK(sorted < plain);
}
