#include "layers/generation/generate.h"

#include <chrono>
#include <string>

#include "core/error.h"

namespace tn {

double GenerationResult::ms_per_token() const {
  return ids.empty() ? 0.0 : 1000.0 * generate_s / static_cast<double>(ids.size());
}

double GenerationResult::tokens_per_s() const {
  return ids.empty() || generate_s <= 0.0 ? 0.0 : static_cast<double>(ids.size()) / generate_s;
}

GenerationResult generate(TransNormerModel& model, const std::vector<int32_t>& prompt_ids,
                          const GenerationOptions& options,
                          const std::function<void(int32_t)>& on_token) {
  using Clock = std::chrono::steady_clock;
  const auto seconds = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  if (options.max_new_tokens < 0)
    throw ConfigError("--max-new-tokens must be >= 0, got " + std::to_string(options.max_new_tokens));
  validate(options.sampling);
  if (prompt_ids.empty())
    throw ShapeError("[generate] the prompt has no ids: start an empty prompt with <eos>");

  Tape tape;
  tape.set_enabled(false);
  Rng dropout_rng(0);  // eval mode: never drawn from
  ForwardContext ctx{tape, false, dropout_rng, nullptr};
  Rng sampling_rng(options.seed);
  ModelDecodeState state = model.start_decode();
  GenerationResult result;
  result.step_ms.reserve(prompt_ids.size() + static_cast<size_t>(options.max_new_tokens));

  Tensor logits;
  const auto feed = [&](int32_t token) {
    const Clock::time_point start = Clock::now();
    logits = model.decode_step(ctx, state, token, state.next_position);
    result.step_ms.push_back(1000.0 * seconds(start, Clock::now()));
  };

  const Clock::time_point prompt_start = Clock::now();
  for (int32_t token : prompt_ids) feed(token);
  const Clock::time_point generate_start = Clock::now();
  result.prompt_s = seconds(prompt_start, generate_start);

  const int64_t vocab = logits.numel();
  for (int64_t i = 0; i < options.max_new_tokens; ++i) {
    const int32_t token = sample_token(logits.data(), vocab, options.sampling, sampling_rng);
    result.ids.push_back(token);
    if (on_token) on_token(token);
    feed(token);
  }
  result.generate_s = seconds(generate_start, Clock::now());
  return result;
}

}  // namespace tn
