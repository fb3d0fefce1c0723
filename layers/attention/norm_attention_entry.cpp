// The mixer table's entry for `norm_attention` (docs/model.md §6): LinearAttention without scaling,
// a norm over d after the product; options kernel φ and norm (T1: elu + srmsnorm, T2: 1+elu).
#include "layers/attention/linear_attention.h"
#include "layers/attention/mixer_flops.h"
#include "layers/attention/mixer_table.h"

namespace tn {
namespace {

void resolve(const JsonSection& s, bool strict, AttentionOptions& options) {
  s.check_keys({"kernel", "norm"}, strict);
  NormAttentionOptions o;
  o.kernel = s.choice("kernel", o.kernel, kernel_names());
  o.norm = read_norm(s, "norm", o.norm);
  options.norm_attention = o;
}

nlohmann::json to_json(const AttentionOptions& options) {
  return {{"kernel", to_string(options.norm_attention.kernel)}, {"norm", to_string(options.norm_attention.norm)}};
}

std::unique_ptr<TokenMixer> make(const ModelConfig& config, ParamStore& store, const std::string& prefix, Rng& rng) {
  LinearOptions options;
  options.kernel = config.attention.norm_attention.kernel;
  options.scaling = false;
  options.norm = config.attention.norm_attention.norm;
  return std::make_unique<LinearAttention>(config, options, store, prefix, rng);
}

/// K = D, no denominator.
double core_flops(const ModelConfig& config, int64_t batch, int64_t seq_len, bool) {
  return linear_core_flops(config, batch, seq_len, static_cast<double>(config.d_head()), false);
}

double projection_flops(const ModelConfig& config, int64_t batch, int64_t seq_len) {
  return dense_projection_flops(config, batch, seq_len, 4.0);
}

}  // namespace

MixerEntry norm_attention_mixer_entry() {
  return {
      .kind = MixerKind::NormAttention,
      .name = "norm_attention",
      .decode = DecodeForm::RecurrentState,
      .resolve = resolve,
      .to_json = to_json,
      .make = make,
      .core_flops = core_flops,
      .projection_flops = projection_flops,
      .test_variants =
          {
              // 70 > the chunk of 64: the gradient crosses the kv_state hand-off between chunks.
              {.name = "norm_attention T1 (elu, srmsnorm)",
               .setup = [](ModelConfig&) {},
               .probe_size = LinearAttention::kChunk,
               .grad_probes = {{.batch = 1, .seq_len = 70, .with_theta = false, .eps = 1e-2},
                               {.batch = 2, .seq_len = 9, .with_theta = true, .eps = 1e-2}}},
              {.name = "norm_attention T2 (1+elu, srmsnorm)",
               .setup = [](ModelConfig& c) { c.attention.norm_attention.kernel = Kernel::OnePlusElu; },
               .probe_size = LinearAttention::kChunk,
               .grad_probes = {{.batch = 2, .seq_len = 9, .with_theta = true, .eps = 1e-2}}},
              {.name = "norm_attention T2 (1+elu, layernorm)",
               .setup =
                   [](ModelConfig& c) {
                     c.attention.norm_attention.kernel = Kernel::OnePlusElu;
                     c.attention.norm_attention.norm = NormKind::LayerNorm;
                   },
               .probe_size = LinearAttention::kChunk},
          },
  };
}

}  // namespace tn
