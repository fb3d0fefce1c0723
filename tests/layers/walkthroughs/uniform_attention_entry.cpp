// The mixer walkthrough's example entry (docs/architecture.md, "Add a token mixer", step 3), added
// to the table with add_mixer where a mixer of the library has its line in mixer_table.cpp (step
// 4). The static initialiser runs before main, so every test of this binary sees it in
// mixer_table().
#include "layers/attention/mixer_flops.h"
#include "layers/attention/mixer_table.h"
#include "tests/layers/walkthroughs/uniform_attention.h"

namespace tn::walkthrough {
namespace {

MixerEntry uniform_attention_mixer_entry() {
  return {
      .kind = MixerKind::Softmax,  // replaced by add_mixer
      .name = "uniform",
      .decode = DecodeForm::RecomputePrefix,
      .resolve = [](const JsonSection& s, bool strict, AttentionOptions&) { s.check_keys({}, strict); },
      .to_json = [](const AttentionOptions&) { return nlohmann::json::object(); },
      .make = [](const ModelConfig& config, ParamStore& store, const std::string& prefix,
                 Rng& rng) -> std::unique_ptr<TokenMixer> {
        return std::make_unique<UniformAttention>(config, store, prefix, rng);
      },
      // The linear attention's count with a key width of 1 and its denominator.
      .core_flops = [](const ModelConfig& config, int64_t batch, int64_t seq_len,
                       bool) { return linear_core_flops(config, batch, seq_len, 1.0, true); },
      .projection_flops = [](const ModelConfig& config, int64_t batch,
                             int64_t seq_len) { return dense_projection_flops(config, batch, seq_len, 2.0); },
      .parameters = [](const ModelConfig& config) {
        const double d = static_cast<double>(config.d_model);
        return 2.0 * (d * d + d);  // v and out
      },
      .test_variants = {{.name = "uniform",
                         .setup = [](ModelConfig&) {},
                         .probe_size = UniformAttention::kChunk,
                         .grad_probes = {{.batch = 2, .seq_len = 9, .with_theta = false, .eps = 1e-2}}}},
      .in_reference = false,
  };
}

}  // namespace

/// The kind add_mixer gave the example (tests name it through the table, by "uniform").
const MixerKind kUniformAttention = add_mixer(uniform_attention_mixer_entry());

}  // namespace tn::walkthrough
