#pragma once
// Batches of examples of similar length, for sentence-level tasks (GLUE): few padded positions
// per batch, still a fresh random mix each epoch. The scheme is fairseq's (ordered_indices then
// batch_by_size, with the batch order shuffled every epoch): shuffle the example indices, sort
// them stably by length (so equal lengths stay in shuffled order), cut the sorted list into
// consecutive batches, shuffle the batches. Everything is a function of (lengths, limits, seed,
// epoch), so a resumed run replays the same epochs bit for bit.
#include <cstdint>
#include <vector>

namespace tn {

/// How big a batch may be: at most `max_sentences` examples and, when max_tokens > 0, at most
/// `max_tokens` padded positions (examples × the batch's longest length, as fairseq counts them).
struct BatchLimits {
  int64_t max_sentences = 32;  // >= 1
  int64_t max_tokens = 0;      // 0: no token budget
};

/// Batches of example indices (into `lengths`, each in tokens) covering every example exactly
/// once, for training epoch `epoch`. The index shuffle is epoch_order(n, seed, epoch)
/// (data/batching/batch_stream.h: Fisher-Yates over SplitMix64 from state seed·2^32 + epoch); the
/// batch order is a Fisher-Yates shuffle continuing the same stream. Inside a batch, indices are
/// in ascending length. Throws ShapeError when a length is negative or a limit is below 1, and
/// ConfigError when one example alone exceeds max_tokens.
std::vector<std::vector<int64_t>> length_batches(const std::vector<int64_t>& lengths, const BatchLimits& limits,
                                                 uint64_t seed, uint64_t epoch);

/// Evaluation batches: indices stably sorted by length (ties in index order), cut as for
/// training, no shuffle; the caller puts the results back in the original order. Throws as
/// length_batches.
std::vector<std::vector<int64_t>> eval_batches(const std::vector<int64_t>& lengths, const BatchLimits& limits);

/// Padded positions / all positions when each batch is padded to its own longest example:
/// 1 - sum(lengths) / sum_b(|b| · max_len(b)). 0 when there are no positions. Throws ShapeError
/// for an index outside `lengths`.
double padding_fraction(const std::vector<int64_t>& lengths, const std::vector<std::vector<int64_t>>& batches);

}  // namespace tn
