#include "data/batching/mlm_masking.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "core/runtime/ignore_index.h"
#include "core/runtime/rng.h"

namespace tn {

uint64_t mlm_mask_key(uint64_t seed, uint64_t epoch, uint64_t sample) {
  uint64_t h = splitmix64_mix(seed ^ 0x6D6C6D5F6D61736BULL);  // "mlm_mask"
  h = splitmix64_mix(h ^ epoch);
  return splitmix64_mix(h ^ sample);
}

int64_t mask_sample(const MlmMasking& masking, const int32_t* tokens, int64_t n, uint64_t key, int32_t* inputs,
                    int32_t* targets, int64_t min_selected) {
  thread_local std::vector<int64_t> candidates;
  candidates.clear();
  for (int64_t i = 0; i < n; ++i) {
    inputs[i] = tokens[i];
    targets[i] = kIgnoreIndex;
    if (tokens[i] >= masking.n_special) candidates.push_back(i);
  }
  Rng rng(key);
  const auto m = static_cast<int64_t>(candidates.size());
  int64_t k = static_cast<int64_t>(std::floor(masking.mask_prob * static_cast<double>(m) + rng.uniform()));
  k = std::min(std::max(k, min_selected), m);
  const int64_t random_span = masking.mask_id - masking.n_special;
  for (int64_t s = 0; s < k; ++s) {  // a partial Fisher-Yates shuffle: the first k are the selection
    const int64_t j = s + static_cast<int64_t>(rng.next_u64() % static_cast<uint64_t>(m - s));
    std::swap(candidates[s], candidates[j]);
    const int64_t pos = candidates[s];
    targets[pos] = tokens[pos];
    const double v = rng.uniform();
    if (v < masking.leave_unmasked_prob) continue;
    if (v < masking.leave_unmasked_prob + masking.random_token_prob && random_span > 0)
      inputs[pos] = masking.n_special + static_cast<int32_t>(rng.next_u64() % static_cast<uint64_t>(random_span));
    else
      inputs[pos] = masking.mask_id;
  }
  return k;
}

}  // namespace tn
