#pragma once
// Language-model blocks and training batches (datasets/README.md "The quickstart's language-model
// protocol"; the PyTorch reference's lm_blocks and collate_blocks; its epoch_order is in
// data/batching/batch_stream.h).
#include <cstdint>
#include <vector>

#include "core/runtime/ignore_index.h"

namespace tn {

/// The protocol's blocks: stream cut into ids[k*L : k*L+L+1] (overlap 1), last partial block kept
/// if it has >= 1 target. Block k's inputs are stream[k*L .. k*L+n) and its targets
/// stream[k*L+1 .. k*L+n], n = targets(k). L = seq_len (>= 1). Blocks are views: nothing is copied.
struct LmBlocks {
  std::vector<int32_t> stream;
  int64_t seq_len = 0;

  /// Number of blocks, ceil((stream.size() - 1) / seq_len); 0 for fewer than 2 ids.
  /// Throws ShapeError when seq_len < 1 and the stream has targets.
  int64_t count() const;
  /// Number of targets in `block` (<= seq_len; only the last block can be shorter).
  /// Throws ShapeError when block is not in [0, count()).
  int64_t targets(int64_t block) const;
  /// Targets over all blocks, = stream.size() - 1 (0 for an empty stream).
  int64_t total_targets() const;
};

/// A batch padded to [rows, seq_len]: inputs padded with <pad>=0, targets with -100.
/// Row-major: inputs[r * seq_len + t]. seq_len is the longest chosen block's target count, i.e.
/// blocks.seq_len unless the batch holds only the short final block (the reference's
/// collate_blocks). n_targets counts the real (non -100) targets.
struct LmBatch {
  int64_t rows = 0, seq_len = 0;
  std::vector<int32_t> inputs, targets;
  int64_t n_targets = 0;
};

/// Fills `batch` (reusing its vectors' memory) with the given blocks; rows = block_ids.size().
/// Throws ShapeError when block_ids is empty or names a block outside [0, blocks.count()).
void make_batch(const LmBlocks& blocks, const std::vector<int64_t>& block_ids, LmBatch& batch);

}  // namespace tn
