#include "data/readers/image_split.h"

#include <cmath>
#include <numeric>
#include <stdexcept>

#include "data/batching/batch_stream.h"

namespace tn {

std::vector<int64_t> split_sizes(int64_t n, const std::vector<double>& fractions) {
  std::vector<int64_t> sizes;
  int64_t taken = 0;
  for (double f : fractions) {
    sizes.push_back(static_cast<int64_t>(std::floor(f * static_cast<double>(n))));
    taken += sizes.back();
  }
  for (size_t k = 0; taken < n && !sizes.empty(); k = (k + 1) % sizes.size(), ++taken) ++sizes[k];
  return sizes;
}

std::vector<std::vector<int64_t>> permuted_parts(int64_t n, const std::vector<int64_t>& sizes, uint64_t seed) {
  if (std::accumulate(sizes.begin(), sizes.end(), int64_t{0}) != n)
    throw std::invalid_argument("permuted_parts: the sizes do not sum to " + std::to_string(n));
  const std::vector<int64_t> order = epoch_order(n, seed, 0);
  std::vector<std::vector<int64_t>> parts;
  auto from = order.begin();
  for (int64_t size : sizes) {
    parts.emplace_back(from, from + size);
    from += size;
  }
  return parts;
}

ImageSplit take_image_split(std::string name, SentenceSplit::Role role, std::string file,
                            std::vector<ImageExample>& rows, const std::vector<int64_t>& indices) {
  ImageSplit split;
  split.name = std::move(name);
  split.role = role;
  split.file = std::move(file);
  split.rows.reserve(indices.size());
  for (int64_t i : indices) split.rows.push_back(std::move(rows[static_cast<size_t>(i)]));
  return split;
}

}  // namespace tn
