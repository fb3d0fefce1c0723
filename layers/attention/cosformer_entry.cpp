// The mixer table's entry for `cosformer`: the denominator clamp eps and whether W_o is applied
// (out_proj). No incremental form (layers/attention/cosformer.h), so its decode form is
// RecomputePrefix.
#include "layers/attention/cosformer.h"
#include "layers/attention/linear_attention.h"
#include "layers/attention/mixer_flops.h"
#include "layers/attention/mixer_table.h"

namespace tn {
namespace {

void resolve(const JsonSection& s, bool strict, AttentionOptions& options) {
  s.check_keys({"eps", "out_proj"}, strict);
  CosformerOptions o;
  o.eps = s.positive("eps", s.number("eps", o.eps), "use a small positive clamp such as 1e-4");
  o.out_proj = s.boolean("out_proj", o.out_proj);
  options.cosformer = o;
}

nlohmann::json to_json(const AttentionOptions& options) {
  return {{"eps", options.cosformer.eps}, {"out_proj", options.cosformer.out_proj}};
}

std::unique_ptr<TokenMixer> make(const ModelConfig& config, ParamStore& store, const std::string& prefix, Rng& rng) {
  return std::make_unique<CosFormer>(config, config.attention.cosformer, store, prefix, rng);
}

/// K = 2D (the sin and cos halves of q' and k'), with a denominator.
double core_flops(const ModelConfig& config, int64_t batch, int64_t seq_len, bool) {
  return linear_core_flops(config, batch, seq_len, 2.0 * static_cast<double>(config.d_head()), true);
}

/// q/k/v/out, or q/k/v without out_proj.
double projection_flops(const ModelConfig& config, int64_t batch, int64_t seq_len) {
  return dense_projection_flops(config, batch, seq_len, config.attention.cosformer.out_proj ? 4.0 : 3.0);
}

}  // namespace

MixerEntry cosformer_mixer_entry() {
  // ReLU inside: a short sequence and a step of 1e-3 keep the finite differences off the kink.
  return {
      .kind = MixerKind::Cosformer,
      .name = "cosformer",
      .decode = DecodeForm::RecomputePrefix,
      .resolve = resolve,
      .to_json = to_json,
      .make = make,
      .core_flops = core_flops,
      .projection_flops = projection_flops,
      .test_variants =
          {
              {.name = "cosformer",
               .setup = [](ModelConfig&) {},
               .probe_size = LinearAttention::kChunk,
               .grad_probes = {{.batch = 1, .seq_len = 9, .with_theta = true, .eps = 1e-3}}},
              {.name = "cosformer without W_o",
               .setup = [](ModelConfig& c) { c.attention.cosformer.out_proj = false; },
               .probe_size = LinearAttention::kChunk,
               .grad_probes = {{.batch = 1, .seq_len = 9, .with_theta = true, .eps = 1e-3}}},
          },
  };
}

}  // namespace tn
