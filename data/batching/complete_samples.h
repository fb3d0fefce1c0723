#pragma once
// Masked-LM samples as fairseq makes them with `--sample-break-mode complete` (TokenBlockDataset,
// then PrependTokenDataset): whole lines, each ending in </s>, packed into samples of at most
// tokens_per_sample tokens counting the <s> put in front of every sample.
#include <cstdint>
#include <vector>

namespace tn {

/// Samples stored end to end: sample i is tokens[offsets[i], offsets[i+1]).
struct PackedSamples {
  std::vector<int32_t> tokens;
  std::vector<int64_t> offsets{0};
  int64_t count() const { return static_cast<int64_t>(offsets.size()) - 1; }
  int64_t length(int64_t i) const { return offsets[i + 1] - offsets[i]; }
  const int32_t* data(int64_t i) const { return tokens.data() + offsets[i]; }
};

/// Packs lines (each a list of ids without specials) into samples `<s> line </s> line </s> …`
/// of at most tokens_per_sample (>= 3) tokens: a line joins the current sample when it fits,
/// else starts the next one. A line longer than one sample (over tokens_per_sample − 2 ids) is,
/// with its </s>, cut into pieces of tokens_per_sample − 1 tokens, each a sample of its own after
/// its <s> (fairseq would refuse such a sample; nothing is dropped here). Empty lines are skipped.
PackedSamples pack_complete(const std::vector<std::vector<int32_t>>& lines, int64_t tokens_per_sample, int32_t bos,
                            int32_t eos);

}  // namespace tn
