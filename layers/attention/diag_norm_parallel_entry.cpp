// The mixer table's entry for `diag_norm_parallel` (the paper's Table 12, "parallel"): DiagAttention
// and NormAttention in every layer, outputs summed. It has no options of its own: the branches read
// `attention.diag` and `attention.norm_attention`. FLOPs are the two entries' sums.
#include "layers/attention/diag_norm_parallel.h"
#include "layers/attention/linear_attention.h"
#include "layers/attention/mixer_table.h"

namespace tn {
namespace {

void resolve(const JsonSection& s, bool strict, AttentionOptions&) { s.check_keys({}, strict); }

nlohmann::json to_json(const AttentionOptions&) { return nlohmann::json::object(); }

std::unique_ptr<TokenMixer> make(const ModelConfig& config, ParamStore& store, const std::string& prefix, Rng& rng) {
  return std::make_unique<DiagNormParallel>(config, store, prefix, rng);
}

double core_flops(const ModelConfig& config, int64_t batch, int64_t seq_len, bool causal) {
  return mixer_entry(MixerKind::Diag).core_flops(config, batch, seq_len, causal) +
         mixer_entry(MixerKind::NormAttention).core_flops(config, batch, seq_len, causal);
}

double projection_flops(const ModelConfig& config, int64_t batch, int64_t seq_len) {
  return mixer_entry(MixerKind::Diag).projection_flops(config, batch, seq_len) +
         mixer_entry(MixerKind::NormAttention).projection_flops(config, batch, seq_len);
}

/// The Diag branch's probabilities (NormAttention keeps only per-position activations).
double saved_floats(const ModelConfig& config, int64_t batch, int64_t seq_len) {
  return mixer_entry(MixerKind::Diag).saved_floats(config, batch, seq_len);
}

/// Both branches' projections.
double parameters(const ModelConfig& config) {
  return mixer_parameters(mixer_entry(MixerKind::Diag), config) +
         mixer_parameters(mixer_entry(MixerKind::NormAttention), config);
}

}  // namespace

MixerEntry diag_norm_parallel_mixer_entry() {
  // Causality is probed around both branches' sizes: the Diag block (16) and NormAttention's chunk
  // (64). The finite-difference variant uses Diag T2 without a norm (smooth, as the diag entry
  // explains) beside NormAttention T1 (elu, srmsnorm); 70 > the chunk crosses the kv_state hand-off.
  return {
      .kind = MixerKind::DiagNormParallel,
      .name = "diag_norm_parallel",
      .decode = DecodeForm::RecurrentState,
      .resolve = resolve,
      .to_json = to_json,
      .make = make,
      .core_flops = core_flops,
      .projection_flops = projection_flops,
      .saved_floats = saved_floats,
      .parameters = parameters,
      .test_variants =
          {
              {.name = "diag_norm_parallel T1, block 16",
               .setup = [](ModelConfig& c) { c.attention.diag.block_size = 16; },
               .probe_size = 16},
              {.name = "diag_norm_parallel T1, block 64",
               .setup = [](ModelConfig&) {},
               .probe_size = LinearAttention::kChunk},
              {.name = "diag_norm_parallel, diag softmax without norm, block 8",
               .setup = [](ModelConfig& c) { c.attention.diag = {8, DiagInner::Softmax, NormKind::None}; },
               .probe_size = 8,
               .grad_probes = {{.batch = 2, .seq_len = 19, .with_theta = true, .eps = 1e-2},
                               {.batch = 1, .seq_len = 70, .with_theta = false, .eps = 1e-2}}},
          },
      .in_reference = false,
  };
}

}  // namespace tn
