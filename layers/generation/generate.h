#pragma once
// Text generation with a decoder LM, token by token through TransNormerModel::decode_step: the
// prompt ids are fed one at a time, then each new token is chosen from the last logits
// (layers/generation/sampler.h) and fed back. With NormAttention, linear, Performer and
// DiagAttention layers the time per token does not grow with the context; softmax layers attend
// over a KV cache (O(t) per token) and cosFormer recomputes its prefix (O(t) per token).
#include <cstdint>
#include <functional>
#include <vector>

#include "layers/generation/sampler.h"
#include "layers/models/transnormer.h"

namespace tn {

/// The most new tokens one call generates: 2^20 (1,048,576). Each costs at least a decode step
/// and 12 bytes of results; a model whose positions do not end (sinusoidal, none) would otherwise
/// take any count, up to 2^63 - 1, and overflow the total it sizes its results by.
inline constexpr int64_t kMaxNewTokens = int64_t{1} << 20;

/// Throws ConfigError naming --max-new-tokens when `max_new_tokens` is negative or above
/// kMaxNewTokens, with the bound.
void check_max_new_tokens(int64_t max_new_tokens);

struct GenerationOptions {
  int64_t max_new_tokens = 20;  // 0..kMaxNewTokens
  SamplingOptions sampling;
  uint64_t seed = 0;            // of the sampling Rng (unused when greedy)
};

struct GenerationResult {
  std::vector<int32_t> ids;     // the max_new_tokens new token ids (the prompt not included)
  double prompt_s = 0.0;        // wall time feeding the prompt
  double generate_s = 0.0;      // wall time of the new tokens: sampling and feeding each back
  std::vector<double> step_ms;  // wall time of every decode_step, prompt then new tokens
  /// generate_s per new token, in milliseconds (0 when no token was generated).
  double ms_per_token() const;
  /// New tokens per second (0 when no token was generated).
  double tokens_per_s() const;
};

/// Feeds prompt_ids (at least one id: start an empty prompt with <eos>) through
/// model.decode_step, then chooses max_new_tokens ids with options.sampling and an Rng seeded by
/// options.seed, feeding each back (so every new token costs one sample and one decode_step).
/// on_token (optional) sees each new id as soon as it is chosen. Eval mode, tape disabled.
/// Deterministic: the same model, prompt and options give the same ids. Throws ConfigError for
/// max_new_tokens outside [0, kMaxNewTokens] or invalid sampling options (naming the flag), or
/// past a model's learned positions, ConfigError for a model that
/// cannot generate (encoder, non-lm head), ShapeError for an empty prompt or an id outside
/// [0, vocab).
GenerationResult generate(TransNormerModel& model, const std::vector<int32_t>& prompt_ids,
                          const GenerationOptions& options,
                          const std::function<void(int32_t)>& on_token = nullptr);

}  // namespace tn
