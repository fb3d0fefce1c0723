// The mixer table's entry for `linear` (LinearAttention with the options of attention.linear):
// kernel φ, normalize (scaling, or a norm's name) and the denominator clamp eps.
#include <tuple>

#include "layers/attention/linear_attention.h"
#include "layers/attention/mixer_flops.h"
#include "layers/attention/mixer_table.h"

namespace tn {
namespace {

void resolve(const JsonSection& s, bool strict, AttentionOptions& options) {
  s.check_keys({"kernel", "normalize", "eps"}, strict);
  LinearOptions o;
  o.kernel = s.choice("kernel", o.kernel, kernel_names());
  NameList<std::pair<bool, NormKind>> normalize = {{"scaling", {true, NormKind::None}}};
  for (const auto& [name, kind] : norm_names()) normalize.push_back({name, {false, kind}});
  std::tie(o.scaling, o.norm) = s.choice("normalize", std::pair{o.scaling, o.norm}, normalize);
  o.eps = s.positive("eps", s.number("eps", o.eps), "use a small positive clamp such as 1e-6");
  options.linear = o;
}

/// normalize is "scaling" or the norm's name.
nlohmann::json to_json(const AttentionOptions& options) {
  const LinearOptions& o = options.linear;
  return {{"kernel", to_string(o.kernel)},
          {"normalize", o.scaling ? std::string("scaling") : to_string(o.norm)},
          {"eps", o.eps}};
}

std::unique_ptr<TokenMixer> make(const ModelConfig& config, ParamStore& store, const std::string& prefix, Rng& rng) {
  return std::make_unique<LinearAttention>(config, config.attention.linear, store, prefix, rng);
}

/// K = D; a denominator only with scaling.
double core_flops(const ModelConfig& config, int64_t batch, int64_t seq_len, bool) {
  return linear_core_flops(config, batch, seq_len, static_cast<double>(config.d_head()),
                           config.attention.linear.scaling);
}

double projection_flops(const ModelConfig& config, int64_t batch, int64_t seq_len) {
  return dense_projection_flops(config, batch, seq_len, 4.0);
}

}  // namespace

MixerEntry linear_mixer_entry() {
  return {
      .kind = MixerKind::Linear,
      .name = "linear",
      .decode = DecodeForm::RecurrentState,
      .resolve = resolve,
      .to_json = to_json,
      .make = make,
      .core_flops = core_flops,
      .projection_flops = projection_flops,
      .test_variants =
          {
              {.name = "linear 1+elu scaling",
               .setup = [](ModelConfig&) {},
               .probe_size = LinearAttention::kChunk,
               .grad_probes = {{.batch = 2, .seq_len = 9, .with_theta = true, .eps = 1e-2}}},
              {.name = "linear relu srmsnorm",
               .setup =
                   [](ModelConfig& c) {
                     c.attention.linear.kernel = Kernel::Relu;
                     c.attention.linear.scaling = false;
                     c.attention.linear.norm = NormKind::SRMSNorm;
                   },
               .probe_size = LinearAttention::kChunk},
              {.name = "linear relu, layernorm, rope",
               .setup =
                   [](ModelConfig& c) {
                     c.attention.linear = {Kernel::Relu, false, NormKind::LayerNorm, 1e-6};
                     c.relative = Relative::RoPE;
                   },
               .probe_size = LinearAttention::kChunk},
          },
  };
}

}  // namespace tn
