// The mixer table's entry for `softmax` (SoftmaxAttention): no options.
#include "layers/attention/mixer_flops.h"
#include "layers/attention/mixer_table.h"
#include "layers/attention/softmax_attention.h"

namespace tn {
namespace {

void resolve(const JsonSection& s, bool strict, AttentionOptions&) { s.check_keys({}, strict); }

nlohmann::json to_json(const AttentionOptions&) { return nlohmann::json::object(); }

std::unique_ptr<TokenMixer> make(const ModelConfig& config, ParamStore& store, const std::string& prefix, Rng& rng) {
  return std::make_unique<SoftmaxAttention>(config, store, prefix, rng);
}

/// P = T(T+1)/2 causal, T² bidirectional pairs.
double core_flops(const ModelConfig& config, int64_t batch, int64_t seq_len, bool causal) {
  return pairwise_core_flops(config, batch, attended_pairs(static_cast<double>(seq_len), causal));
}

double projection_flops(const ModelConfig& config, int64_t batch, int64_t seq_len) {
  return dense_projection_flops(config, batch, seq_len, 4.0);
}

/// The row statistics kept for the backward: B·H·n·2 (kernels/softmax_attention.h); no n×n matrix.
double saved_floats(const ModelConfig& config, int64_t batch, int64_t seq_len) {
  return static_cast<double>(batch) * static_cast<double>(config.n_heads) *
         static_cast<double>(seq_len) * 2.0;
}

}  // namespace

MixerEntry softmax_mixer_entry() {
  return {
      .kind = MixerKind::Softmax,
      .name = "softmax",
      .decode = DecodeForm::Cache,
      .resolve = resolve,
      .to_json = to_json,
      .make = make,
      .core_flops = core_flops,
      .projection_flops = projection_flops,
      .saved_floats = saved_floats,
      .test_variants =
          {
              {.name = "softmax", .setup = [](ModelConfig&) {}, .probe_size = 64},
              {.name = "softmax, rope",
               .setup = [](ModelConfig& c) { c.relative = Relative::RoPE; },
               .probe_size = 64,
               .grad_probes = {{.batch = 2, .seq_len = 9, .with_theta = true, .eps = 1e-2}}},
          },
  };
}

}  // namespace tn
