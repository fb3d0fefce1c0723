#pragma once
// How the image readers (cifar10, pathfinder) cut their examples into splits: a seeded permutation
// dealt into consecutive parts, as torch.utils.data.random_split does in the official loaders. The
// permutation is this project's (epoch_order, data/batching/batch_stream.h), not torch's: the same
// sizes and a deterministic choice per seed, but not the indices torch's generator picks.
#include <cstdint>
#include <string>
#include <vector>

#include "data/readers/reader.h"

namespace tn {

/// The part sizes for `fractions` of `n` examples as random_split computes them from fractions:
/// floor(f_k · n) each, then the examples left over one at a time to the parts in order (the first,
/// the second, ...). n=10, {0.8, 0.1, 0.1} → {8, 1, 1}; n=17 → {14, 2, 1}. The fractions are
/// non-negative and sum to 1 (the caller has checked).
std::vector<int64_t> split_sizes(int64_t n, const std::vector<double>& fractions);

/// [0, n) dealt into parts: part k is the entries [offset_k, offset_k + sizes[k]) of
/// epoch_order(n, seed, 0), in that order, offset_k the sum of the sizes before k. The sizes sum to
/// n (std::invalid_argument otherwise).
std::vector<std::vector<int64_t>> permuted_parts(int64_t n, const std::vector<int64_t>& sizes, uint64_t seed);

/// A split holding rows[i] for i in `indices`, in that order, moved out of `rows`.
ImageSplit take_image_split(std::string name, SentenceSplit::Role role, std::string file,
                            std::vector<ImageExample>& rows, const std::vector<int64_t>& indices);

}  // namespace tn
