#include "layers/generation/generate.h"

#include <algorithm>
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

void check_max_new_tokens(int64_t max_new_tokens) {
  if (max_new_tokens < 0) throw ConfigError("--max-new-tokens must be >= 0, got " + std::to_string(max_new_tokens));
  if (max_new_tokens > kMaxNewTokens)
    throw ConfigError("--max-new-tokens " + std::to_string(max_new_tokens) + " is more than the " +
                      std::to_string(kMaxNewTokens) + " tokens one call generates; ask for at most " +
                      std::to_string(kMaxNewTokens) + " and continue from the output if you need more");
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

  const ModelConfig& config = model.config();
  // Learned positions end where the model does: their bound, when it applies, is the one to name.
  if (config.positional == Positional::Learned &&
      (options.max_new_tokens > config.max_positions ||
       static_cast<int64_t>(prompt_ids.size()) + options.max_new_tokens > config.max_positions))
    throw ConfigError("--max-new-tokens " + std::to_string(options.max_new_tokens) + " with a prompt of " +
                      std::to_string(prompt_ids.size()) + " ids goes past the model's " +
                      std::to_string(config.max_positions) +
                      " learned positions (model.max_positions): ask for at most " +
                      std::to_string(std::max<int64_t>(0, config.max_positions - static_cast<int64_t>(prompt_ids.size()))) +
                      " new tokens");
  check_max_new_tokens(options.max_new_tokens);  // every model's bound: the total below cannot overflow
  const int64_t total = static_cast<int64_t>(prompt_ids.size()) + options.max_new_tokens;
  Tape tape;
  tape.set_enabled(false);
  Rng dropout_rng(0);  // eval mode: never drawn from
  ForwardContext ctx{tape, false, dropout_rng, nullptr};
  Rng sampling_rng(options.seed);
  ModelDecodeState state = model.start_decode();
  GenerationResult result;
  // Reserved up to a bound: a long generation (sinusoidal or no positions have no limit) grows as it goes.
  result.step_ms.reserve(static_cast<size_t>(std::min<int64_t>(total, int64_t{1} << 20)));

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
