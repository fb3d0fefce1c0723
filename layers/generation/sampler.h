#pragma once
// Choosing the next token from a language model's logits: greedy (temperature 0) or sampling from
// softmax(logits / temperature), optionally restricted to the top_k largest logits (Fan et al.
// 2018, "Hierarchical Neural Story Generation"). One Rng draw per sampled token, so a seed
// reproduces a generation.
#include <cstdint>

#include "core/runtime/rng.h"

namespace tn {

struct SamplingOptions {
  double temperature = 1.0;  // >= 0; 0 = greedy (argmax)
  int64_t top_k = 0;         // >= 0; 0 = every token
};

/// Throws ConfigError naming the flag for temperature < 0 (or not finite) or top_k < 0.
void validate(const SamplingOptions& options);

/// The next token id from logits [vocab]. temperature 0: the argmax (lowest id on ties), no draw.
/// Otherwise: keep the top_k largest logits (every one when top_k is 0 or >= vocab; ties at the
/// cut go to lower ids), p_i ∝ exp((logit_i − max) / temperature) in double, then one
/// rng.uniform() draw inverted through the cumulative sum in id order. Throws ConfigError for
/// invalid options and ShapeError for vocab < 1.
int32_t sample_token(const float* logits, int64_t vocab, const SamplingOptions& options, Rng& rng);

}  // namespace tn
