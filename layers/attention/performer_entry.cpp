// The mixer table's entry for `performer` (FAVOR+): the number of random features m, the
// denominator clamp eps and the feature offset feature_eps.
#include "layers/attention/linear_attention.h"
#include "layers/attention/mixer_flops.h"
#include "layers/attention/mixer_table.h"
#include "layers/attention/performer.h"
#include "layers/config/model_limits.h"

namespace tn {
namespace {

void resolve(const JsonSection& s, bool strict, AttentionOptions& options) {
  s.check_keys({"features", "eps", "feature_eps"}, strict);
  PerformerOptions o;
  o.features = s.at_least("features", s.integer("features", o.features), 1,
                          "use a positive number of random features such as 64");
  s.at_most("features", o.features, kMaxModelWidth, "use a number of random features such as 64 (at most 2^30)");
  o.eps = s.positive("eps", s.number("eps", o.eps), "use a small positive clamp such as 1e-2");
  o.feature_eps = s.at_least("feature_eps", s.number("feature_eps", o.feature_eps), 0.0,
                             "use a small non-negative offset such as 1e-4");
  options.performer = o;
}

nlohmann::json to_json(const AttentionOptions& options) {
  const PerformerOptions& o = options.performer;
  return {{"features", o.features}, {"eps", o.eps}, {"feature_eps", o.feature_eps}};
}

std::unique_ptr<TokenMixer> make(const ModelConfig& config, ParamStore& store, const std::string& prefix, Rng& rng) {
  return std::make_unique<Performer>(config, config.attention.performer, store, prefix, rng);
}

/// K = m features, with a denominator.
double core_flops(const ModelConfig& config, int64_t batch, int64_t seq_len, bool) {
  return linear_core_flops(config, batch, seq_len, static_cast<double>(config.attention.performer.features), true);
}

/// q/k/v/out, and q and k onto m features per head: [N·H, D] × [D, m] twice.
double projection_flops(const ModelConfig& config, int64_t batch, int64_t seq_len) {
  const double N = static_cast<double>(batch) * static_cast<double>(seq_len);
  return dense_projection_flops(config, batch, seq_len, 4.0) +
         2.0 * 2.0 * N * static_cast<double>(config.n_heads) *
             static_cast<double>(config.attention.performer.features) * static_cast<double>(config.d_head());
}

/// φ(q) and φ(k), kept for the backward: 2·B·n·H·m floats, m the random features.
double saved_floats(const ModelConfig& config, int64_t batch, int64_t seq_len) {
  return 2.0 * static_cast<double>(batch) * static_cast<double>(seq_len) * static_cast<double>(config.n_heads) *
         static_cast<double>(config.attention.performer.features);
}

/// The random features ω, one [features, d_head] matrix per head.
double buffers(const ModelConfig& config) {
  return static_cast<double>(config.attention.performer.features) * static_cast<double>(config.d_model);
}

std::string buffer_option(const ModelConfig& config) {
  return "attention.performer.features " + std::to_string(config.attention.performer.features);
}

}  // namespace

MixerEntry performer_mixer_entry() {
  return {
      .kind = MixerKind::Performer,
      .name = "performer",
      .decode = DecodeForm::RecurrentState,
      .resolve = resolve,
      .to_json = to_json,
      .make = make,
      .core_flops = core_flops,
      .projection_flops = projection_flops,
      .saved_floats = saved_floats,
      .buffers = buffers,
      .buffer_option = buffer_option,
      .test_variants =
          {
              {.name = "performer, 12 features",
               .setup = [](ModelConfig& c) { c.attention.performer.features = 12; },
               .probe_size = LinearAttention::kChunk},
          },
      .no_grad_probes_because =
          "its stabiliser is a constant for autograd (the PyTorch reference detaches it), so plain finite "
          "differences, which move the stabiliser too, differentiate another function wherever a "
          "denominator is clamped; the kernel is checked with the stabiliser held fixed "
          "(tests/layers/kernels/test_performer_features.cpp) and the module against PyTorch's "
          "autograd (golden dec_performer, enc_performer)",
  };
}

}  // namespace tn
