// Masked-LM corruption (data/batching/mlm_masking.h) and complete-mode samples
// (data/batching/complete_samples.h).
#include <doctest/doctest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "core/runtime/ignore_index.h"
#include "data/batching/complete_samples.h"
#include "data/batching/mlm_masking.h"

using namespace tn;

namespace {
MlmMasking roberta() {
  MlmMasking m;
  m.mask_id = 1000;
  return m;
}
}  // namespace

TEST_CASE("mlm masking: 15 % selected, of them 80 % <mask>, 10 % random, 10 % kept") {
  const MlmMasking m = roberta();
  std::vector<int32_t> tokens(200);
  for (int i = 0; i < 200; ++i) tokens[i] = 4 + (i * 37) % 900;
  tokens[0] = 0;    // <s>
  tokens[199] = 2;  // </s>
  std::vector<int32_t> in(200), tg(200);
  int64_t selected = 0, masked = 0, random = 0, kept = 0, samples = 2000;
  for (int64_t s = 0; s < samples; ++s) {
    const int64_t k = mask_sample(m, tokens.data(), 200, mlm_mask_key(7, 0, s), in.data(), tg.data());
    // 198 selectable positions: floor(29.7 + u) is 29 or 30.
    CHECK((k == 29 || k == 30));
    CHECK(tg[0] == kIgnoreIndex);  // specials are never selected
    CHECK(tg[199] == kIgnoreIndex);
    CHECK(in[0] == 0);
    int64_t here = 0;
    for (int i = 0; i < 200; ++i) {
      if (tg[i] == kIgnoreIndex) {
        CHECK(in[i] == tokens[i]);  // an unselected position is never changed
        continue;
      }
      ++here;
      CHECK(tg[i] == tokens[i]);
      if (in[i] == m.mask_id) ++masked;
      else if (in[i] == tokens[i]) ++kept;
      else {
        ++random;
        CHECK(in[i] >= 4);
        CHECK(in[i] < m.mask_id);
      }
    }
    CHECK(here == k);
    selected += k;
  }
  // E[k] = 0.15 · 198 = 29.7 exactly (probabilistic rounding); 2000 samples give ± 0.01.
  CHECK(static_cast<double>(selected) / samples == doctest::Approx(29.7).epsilon(0.002));
  const double n = static_cast<double>(selected);  // ~59,400 positions: 3 sigma is ~0.4 %
  CHECK(masked / n == doctest::Approx(0.8).epsilon(0.01));
  // A random token can draw the original (1 in 996): counted as kept, so kept ≥ 10 %.
  CHECK(random / n == doctest::Approx(0.1 * 995.0 / 996.0).epsilon(0.05));
  CHECK(kept / n == doctest::Approx(0.1 + 0.1 / 996.0).epsilon(0.05));
}

TEST_CASE("mlm masking: deterministic in the key, different across epochs and samples") {
  const MlmMasking m = roberta();
  std::vector<int32_t> tokens(64);
  std::iota(tokens.begin(), tokens.end(), 10);
  std::vector<int32_t> a(64), ta(64), b(64), tb(64);
  mask_sample(m, tokens.data(), 64, mlm_mask_key(1, 3, 5), a.data(), ta.data());
  mask_sample(m, tokens.data(), 64, mlm_mask_key(1, 3, 5), b.data(), tb.data());
  CHECK(a == b);
  CHECK(ta == tb);
  mask_sample(m, tokens.data(), 64, mlm_mask_key(1, 4, 5), b.data(), tb.data());
  CHECK(ta != tb);
  mask_sample(m, tokens.data(), 64, mlm_mask_key(1, 3, 6), b.data(), tb.data());
  CHECK(ta != tb);
  CHECK(mlm_mask_key(1, kValidMaskEpoch, 0) != mlm_mask_key(1, 0, 0));
}

TEST_CASE("mlm masking: a short sample still gets min_selected positions") {
  const MlmMasking m = roberta();
  const std::vector<int32_t> tokens = {0, 50, 2};  // <s> x </s>: 0.15 · 1 rounds to 0 most of the time
  std::vector<int32_t> in(3), tg(3);
  int64_t zero = 0;
  for (uint64_t s = 0; s < 100; ++s) zero += mask_sample(m, tokens.data(), 3, s, in.data(), tg.data()) == 0;
  CHECK(zero > 70);  // P(0) = 0.85
  for (uint64_t s = 0; s < 100; ++s) {
    CHECK(mask_sample(m, tokens.data(), 3, s, in.data(), tg.data(), 1) == 1);
    CHECK(tg[1] == 50);
  }
  const std::vector<int32_t> specials = {0, 2};
  CHECK(mask_sample(m, specials.data(), 2, 1, in.data(), tg.data(), 1) == 0);  // nothing to select
}

TEST_CASE("complete samples: whole lines packed, <s> first and </s> after every line") {
  // Lines of 3, 2, 4 and 1 ids, samples of at most 8 tokens: <s> a a a </s> b b </s> = 8 fits;
  // the 4-id line needs 5 more and starts a sample; the 1-id line joins it (1 + 5 + 2 = 8).
  const std::vector<std::vector<int32_t>> lines = {{10, 11, 12}, {20, 21}, {}, {30, 31, 32, 33}, {40}};
  const PackedSamples p = pack_complete(lines, 8, 0, 2);
  REQUIRE(p.count() == 2);
  CHECK(std::vector<int32_t>(p.data(0), p.data(0) + p.length(0)) ==
        std::vector<int32_t>{0, 10, 11, 12, 2, 20, 21, 2});
  CHECK(std::vector<int32_t>(p.data(1), p.data(1) + p.length(1)) ==
        std::vector<int32_t>{0, 30, 31, 32, 33, 2, 40, 2});
}

TEST_CASE("complete samples: a line longer than a sample is cut into samples of its own") {
  // 9 ids + </s> = 10 tokens in pieces of 4 (tokens_per_sample 5 with the <s>): 4, 4, 2.
  std::vector<int32_t> longline(9);
  std::iota(longline.begin(), longline.end(), 100);
  const PackedSamples p = pack_complete({{7}, longline, {8}}, 5, 0, 2);
  REQUIRE(p.count() == 5);
  CHECK(std::vector<int32_t>(p.data(0), p.data(0) + p.length(0)) == std::vector<int32_t>{0, 7, 2});
  CHECK(std::vector<int32_t>(p.data(1), p.data(1) + p.length(1)) == std::vector<int32_t>{0, 100, 101, 102, 103});
  CHECK(std::vector<int32_t>(p.data(2), p.data(2) + p.length(2)) == std::vector<int32_t>{0, 104, 105, 106, 107});
  CHECK(std::vector<int32_t>(p.data(3), p.data(3) + p.length(3)) == std::vector<int32_t>{0, 108, 2});
  CHECK(std::vector<int32_t>(p.data(4), p.data(4) + p.length(4)) == std::vector<int32_t>{0, 8, 2});
  for (int64_t i = 0; i < p.count(); ++i) CHECK(p.length(i) <= 5);
}
