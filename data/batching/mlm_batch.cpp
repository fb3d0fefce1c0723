#include "data/batching/mlm_batch.h"

#include <algorithm>

#include "core/error.h"
#include "core/runtime/ignore_index.h"

namespace tn {

void make_mlm_batch(const PackedSamples& samples, const std::vector<int64_t>& ids, const MlmMasking& masking,
                    uint64_t seed, uint64_t epoch, int32_t pad, MlmBatch& batch) {
  if (ids.empty()) throw ShapeError("[make_mlm_batch] no samples");
  int64_t longest = 0;
  for (int64_t id : ids) {
    if (id < 0 || id >= samples.count())
      throw ShapeError("[make_mlm_batch] sample " + std::to_string(id) + " outside [0, " +
                       std::to_string(samples.count()) + ")");
    longest = std::max(longest, samples.length(id));
  }
  batch.rows = static_cast<int64_t>(ids.size());
  batch.seq_len = longest;
  const int64_t cells = batch.rows * longest;
  batch.inputs.assign(cells, pad);
  batch.key_valid.assign(cells, 0);
  batch.masked_rows.clear();
  batch.masked_targets.clear();
  std::vector<int32_t> targets(longest);
  for (int64_t r = 0; r < batch.rows; ++r) {
    const int64_t n = samples.length(ids[r]);
    mask_sample(masking, samples.data(ids[r]), n, mlm_mask_key(seed, epoch, static_cast<uint64_t>(ids[r])),
                batch.inputs.data() + r * longest, targets.data(), 1);
    std::fill_n(batch.key_valid.begin() + r * longest, n, uint8_t{1});
    for (int64_t t = 0; t < n; ++t)
      if (targets[t] != kIgnoreIndex) {
        batch.masked_rows.push_back(r * longest + t);
        batch.masked_targets.push_back(targets[t]);
      }
  }
}

}  // namespace tn
