#include "data/batching/length_batches.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "core/error.h"
#include "core/runtime/rng.h"

namespace tn {
namespace {

void check(const std::vector<int64_t>& lengths, const BatchLimits& limits) {
  if (limits.max_sentences < 1)
    throw ShapeError("[length_batches] max_sentences is " + std::to_string(limits.max_sentences) + ", expected >= 1");
  if (limits.max_tokens < 0)
    throw ShapeError("[length_batches] max_tokens is " + std::to_string(limits.max_tokens) + ", expected >= 0");
  for (size_t i = 0; i < lengths.size(); ++i) {
    if (lengths[i] < 0)
      throw ShapeError("[length_batches] example " + std::to_string(i) + " has length " + std::to_string(lengths[i]));
    if (limits.max_tokens > 0 && lengths[i] > limits.max_tokens)
      throw ConfigError("example " + std::to_string(i) + " has " + std::to_string(lengths[i]) +
                        " tokens, more than the batch's token budget of " + std::to_string(limits.max_tokens) +
                        " (raise the token budget to at least the longest example, or lower max_positions so "
                        "examples are truncated)");
  }
}

/// Fisher-Yates as epoch_order: for i = n-1 down to 1, j = next() mod (i+1), swap i and j.
template <class T>
void shuffle(std::vector<T>& items, Rng& rng) {
  for (size_t i = items.size(); i-- > 1;) {
    const auto j = static_cast<size_t>(rng.next_u64() % static_cast<uint64_t>(i + 1));
    std::swap(items[i], items[j]);
  }
}

/// Stable sort of `order` by length, then consecutive cuts under the limits.
std::vector<std::vector<int64_t>> cut(std::vector<int64_t> order, const std::vector<int64_t>& lengths,
                                      const BatchLimits& limits) {
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return lengths[a] < lengths[b]; });
  std::vector<std::vector<int64_t>> batches;
  std::vector<int64_t> batch;
  int64_t longest = 0;
  for (int64_t index : order) {
    const int64_t width = std::max(longest, lengths[index]);
    const auto rows = static_cast<int64_t>(batch.size()) + 1;
    const bool full = static_cast<int64_t>(batch.size()) == limits.max_sentences ||
                      (limits.max_tokens > 0 && rows * width > limits.max_tokens);
    if (!batch.empty() && full) {
      batches.push_back(std::move(batch));
      batch.clear();
      longest = 0;
    }
    batch.push_back(index);
    longest = std::max(longest, lengths[index]);
  }
  if (!batch.empty()) batches.push_back(std::move(batch));
  return batches;
}

}  // namespace

std::vector<std::vector<int64_t>> length_batches(const std::vector<int64_t>& lengths, const BatchLimits& limits,
                                                 uint64_t seed, uint64_t epoch) {
  check(lengths, limits);
  std::vector<int64_t> order(lengths.size());
  std::iota(order.begin(), order.end(), int64_t{0});
  Rng rng((seed << 32) + epoch);  // the state epoch_order starts from
  shuffle(order, rng);
  std::vector<std::vector<int64_t>> batches = cut(std::move(order), lengths, limits);
  shuffle(batches, rng);
  return batches;
}

std::vector<std::vector<int64_t>> eval_batches(const std::vector<int64_t>& lengths, const BatchLimits& limits) {
  check(lengths, limits);
  std::vector<int64_t> order(lengths.size());
  std::iota(order.begin(), order.end(), int64_t{0});
  return cut(std::move(order), lengths, limits);
}

double padding_fraction(const std::vector<int64_t>& lengths, const std::vector<std::vector<int64_t>>& batches) {
  int64_t real = 0, total = 0;
  for (const std::vector<int64_t>& batch : batches) {
    int64_t longest = 0;
    for (int64_t index : batch) {
      if (index < 0 || index >= static_cast<int64_t>(lengths.size()))
        throw ShapeError("[padding_fraction] index " + std::to_string(index) + " outside [0, " +
                         std::to_string(lengths.size()) + ")");
      real += lengths[static_cast<size_t>(index)];
      longest = std::max(longest, lengths[static_cast<size_t>(index)]);
    }
    total += longest * static_cast<int64_t>(batch.size());
  }
  return total == 0 ? 0.0 : 1.0 - static_cast<double>(real) / static_cast<double>(total);
}

}  // namespace tn
