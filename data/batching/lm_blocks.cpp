#include "data/batching/lm_blocks.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "core/error.h"
#include "data/tokenizers/word_vocab.h"

namespace tn {
namespace {

/// One SplitMix64 step (Steele, Lea and Flood 2014, as in the reference); all arithmetic mod 2^64.
uint64_t splitmix64_next(uint64_t& state) {
  state += 0x9E3779B97F4A7C15ull;
  uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

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

std::vector<int64_t> epoch_order(int64_t n_blocks, uint64_t seed, uint64_t epoch) {
  if (n_blocks < 0)
    throw ShapeError("[epoch_order] n_blocks is " + std::to_string(n_blocks) + ", expected >= 0");
  std::vector<int64_t> order(static_cast<size_t>(n_blocks));
  std::iota(order.begin(), order.end(), int64_t{0});
  uint64_t state = (seed << 32) + epoch;
  for (int64_t i = n_blocks - 1; i >= 1; --i) {
    const auto j = static_cast<int64_t>(splitmix64_next(state) % static_cast<uint64_t>(i + 1));
    std::swap(order[i], order[j]);
  }
  return order;
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
