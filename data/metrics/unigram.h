#pragma once
// The unigram perplexity floor that a language model must beat (summary.json unigram_*_ppl,
// datasets/README.md; the PyTorch reference's unigram_ppl).
#include <cstdint>
#include <vector>

namespace tn {

/// Perplexity of eval_stream[1:] (the targets an LM is scored on) under the add-one-smoothed
/// unigram distribution of train_stream over vocab_size ids (specials included):
/// p(w) = (count_train(w) + 1) / (train_stream.size() + vocab_size); returns
/// exp(-mean log p(target)). Computed in double, summed pairwise like numpy's mean.
/// Throws ShapeError when vocab_size < 1, an id is outside [0, vocab_size), or eval_stream has
/// fewer than 2 ids (no target).
double unigram_ppl(const std::vector<int32_t>& train_stream, const std::vector<int32_t>& eval_stream,
                   int64_t vocab_size);

}  // namespace tn
