#include "layers/generation/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "core/error.h"

namespace tn {

void validate(const SamplingOptions& options) {
  if (!(options.temperature >= 0.0) || !std::isfinite(options.temperature))
    throw ConfigError("--temperature must be a finite number >= 0 (0 = greedy), got " +
                      std::to_string(options.temperature));
  if (options.top_k < 0)
    throw ConfigError("--top-k must be >= 0 (0 = every token), got " + std::to_string(options.top_k));
}

int32_t sample_token(const float* logits, int64_t vocab, const SamplingOptions& options, Rng& rng) {
  validate(options);
  if (vocab < 1) throw ShapeError("[sample_token] vocab must be >= 1, got " + std::to_string(vocab));
  if (options.temperature == 0.0)
    return static_cast<int32_t>(std::max_element(logits, logits + vocab) - logits);

  // Candidate ids, in id order; top-k keeps the k largest logits (lower ids win ties).
  std::vector<int32_t> ids(static_cast<size_t>(vocab));
  std::iota(ids.begin(), ids.end(), 0);
  if (options.top_k > 0 && options.top_k < vocab) {
    const auto larger = [logits](int32_t a, int32_t b) {
      return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
    };
    std::nth_element(ids.begin(), ids.begin() + (options.top_k - 1), ids.end(), larger);
    ids.resize(static_cast<size_t>(options.top_k));
    std::sort(ids.begin(), ids.end());
  }
  double max_logit = -INFINITY;
  for (int32_t id : ids) max_logit = std::max(max_logit, static_cast<double>(logits[id]));
  std::vector<double> weights(ids.size());
  double total = 0.0;
  for (size_t i = 0; i < ids.size(); ++i) {
    weights[i] = std::exp((static_cast<double>(logits[ids[i]]) - max_logit) / options.temperature);
    total += weights[i];
  }
  const double target = rng.uniform() * total;
  double cumulative = 0.0;
  for (size_t i = 0; i < ids.size(); ++i) {
    cumulative += weights[i];
    if (target < cumulative) return ids[i];
  }
  // Rounding can leave target == total: the last candidate with a non-zero weight.
  for (size_t i = ids.size(); i-- > 0;)
    if (weights[i] > 0.0) return ids[i];
  return ids.back();
}

}  // namespace tn
