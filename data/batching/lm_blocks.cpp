#include "data/batching/lm_blocks.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "core/error.h"
#include "data/tokenizers/word_vocab.h"

namespace tn {

int64_t LmBlocks::count() const {
  const int64_t n_targets = total_targets();
  if (n_targets == 0) return 0;
  if (seq_len < 1)
    throw ShapeError("[lm_blocks] seq_len is " + std::to_string(seq_len) + ", expected >= 1");
  return (n_targets + seq_len - 1) / seq_len;
}

int64_t LmBlocks::targets(int64_t block) const {
  const int64_t n_blocks = count();
  if (block < 0 || block >= n_blocks)
    throw ShapeError("[lm_blocks] block " + std::to_string(block) + " out of range [0, " +
                     std::to_string(n_blocks) + ")");
  return std::min(seq_len, total_targets() - block * seq_len);
}

int64_t LmBlocks::total_targets() const {
  return stream.empty() ? 0 : static_cast<int64_t>(stream.size()) - 1;
}

void make_batch(const LmBlocks& blocks, const std::vector<int64_t>& block_ids, LmBatch& batch) {
  if (block_ids.empty()) throw ShapeError("[make_batch] no blocks given");
  int64_t width = 0;
  for (int64_t block : block_ids) width = std::max(width, blocks.targets(block));  // range-checks

  batch.rows = static_cast<int64_t>(block_ids.size());
  batch.seq_len = width;
  const auto cells = static_cast<size_t>(batch.rows * width);
  batch.inputs.assign(cells, WordVocab::kPad);
  batch.targets.assign(cells, kIgnoreIndex);
  batch.n_targets = 0;
  for (int64_t row = 0; row < batch.rows; ++row) {
    const int64_t block = block_ids[row];
    const int64_t n = blocks.targets(block);
    const int32_t* src = blocks.stream.data() + block * blocks.seq_len;
    std::copy(src, src + n, batch.inputs.begin() + row * width);
    std::copy(src + 1, src + 1 + n, batch.targets.begin() + row * width);
    batch.n_targets += n;
  }
}

}  // namespace tn
