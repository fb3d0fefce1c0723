#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "core/error.h"
#include "data/batching/lm_blocks.h"

using namespace tn;

namespace {

LmBlocks iota_blocks(int32_t n_ids, int64_t seq_len) {
  LmBlocks blocks;
  blocks.stream.resize(static_cast<size_t>(n_ids));
  std::iota(blocks.stream.begin(), blocks.stream.end(), 10);  // ids 10, 11, ...
  blocks.seq_len = seq_len;
  return blocks;
}

}  // namespace

TEST_CASE("lm_blocks: blocks overlap by one id and keep the last partial block") {
  // 10 ids, L = 4: blocks [0..4], [4..8], [8..9] -> targets 4, 4, 1.
  const LmBlocks blocks = iota_blocks(10, 4);
  CHECK(blocks.count() == 3);
  CHECK(blocks.targets(0) == 4);
  CHECK(blocks.targets(1) == 4);
  CHECK(blocks.targets(2) == 1);
  CHECK(blocks.total_targets() == 9);
  CHECK_THROWS_AS(blocks.targets(3), ShapeError);
  CHECK_THROWS_AS(blocks.targets(-1), ShapeError);

  CHECK(iota_blocks(9, 4).count() == 2);  // 8 targets fill exactly two blocks
  CHECK(iota_blocks(1, 4).count() == 0);  // no target
  CHECK(iota_blocks(0, 4).count() == 0);
  CHECK(iota_blocks(0, 4).total_targets() == 0);
  CHECK(iota_blocks(2, 4).count() == 1);
  CHECK_THROWS_AS(iota_blocks(5, 0).count(), ShapeError);
}

TEST_CASE("lm_blocks: make_batch pads inputs with <pad> and targets with -100") {
  const LmBlocks blocks = iota_blocks(10, 4);  // stream 10..19
  LmBatch batch;
  make_batch(blocks, {2, 0}, batch);
  CHECK(batch.rows == 2);
  CHECK(batch.seq_len == 4);
  CHECK(batch.n_targets == 5);
  CHECK(batch.inputs == std::vector<int32_t>{18, 0, 0, 0, 10, 11, 12, 13});
  CHECK(batch.targets == std::vector<int32_t>{19, -100, -100, -100, 11, 12, 13, 14});

  // The vectors are reused: refilling with a full batch keeps the buffer.
  const int32_t* before = batch.inputs.data();
  make_batch(blocks, {1, 0}, batch);
  CHECK(batch.inputs.data() == before);
  CHECK(batch.inputs == std::vector<int32_t>{14, 15, 16, 17, 10, 11, 12, 13});
  CHECK(batch.targets == std::vector<int32_t>{15, 16, 17, 18, 11, 12, 13, 14});
  CHECK(batch.n_targets == 8);

  // Only the short last block: as wide as that block (the reference's collate_blocks).
  make_batch(blocks, {2}, batch);
  CHECK(batch.rows == 1);
  CHECK(batch.seq_len == 1);
  CHECK(batch.inputs == std::vector<int32_t>{18});
  CHECK(batch.targets == std::vector<int32_t>{19});

  CHECK_THROWS_AS(make_batch(blocks, {}, batch), ShapeError);
  CHECK_THROWS_AS(make_batch(blocks, {0, 3}, batch), ShapeError);
}

TEST_CASE("lm_blocks: the reference selftest's block lengths") {
  // 11 ids at seq_len 3 -> blocks of 4, 4, 4, 2 ids (targets 3, 3, 3, 1), consecutive blocks share
  // their boundary id.
  const LmBlocks blocks = iota_blocks(11, 3);
  REQUIRE(blocks.count() == 4);
  CHECK(std::vector<int64_t>{blocks.targets(0), blocks.targets(1), blocks.targets(2),
                             blocks.targets(3)} == std::vector<int64_t>{3, 3, 3, 1});
  LmBatch batch;
  make_batch(blocks, {0, 1}, batch);
  CHECK(batch.targets[2] == batch.inputs[3]);  // block 0's last target is block 1's first input
}
