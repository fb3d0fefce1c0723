#include "experiments/bench/bench_flops.h"

#include "layers/attention/mixer_table.h"
#include "layers/inputs/input_table.h"

namespace tn {

double mixer_core_flops(const ModelConfig& config, MixerKind kind, int64_t batch, int64_t seq_len,
                        bool causal) {
  return mixer_entry(kind).core_flops(config, batch, seq_len, causal);
}

double mixer_projection_flops(const ModelConfig& config, MixerKind kind, int64_t batch, int64_t seq_len) {
  return mixer_entry(kind).projection_flops(config, batch, seq_len);
}

ModelFlops model_flops(const ModelConfig& config, int64_t batch, int64_t seq_len) {
  ModelFlops f;
  const double N = static_cast<double>(batch) * static_cast<double>(seq_len);
  const double d = static_cast<double>(config.d_model);
  const double d_ff = static_cast<double>(config.channel_mixer.d_ff);
  f.input = input_entry(config.input.kind).flops(config, N);
  const double mixer_products = config.channel_mixer.type == ChannelMixerKind::GLU ? 3.0 : 2.0;
  for (int64_t i = 0; i < config.n_layers; ++i) {
    const MixerKind kind =
        i < static_cast<int64_t>(config.layers.size()) ? config.layers[i] : config.token_mixer;
    f.projections += mixer_projection_flops(config, kind, batch, seq_len);
    f.attention += mixer_core_flops(config, kind, batch, seq_len, config.causal());
    f.channel_mixer += mixer_products * 2.0 * N * d * d_ff;
  }
  const double V = static_cast<double>(config.vocab_size);
  switch (config.head) {
    case HeadKind::LM: f.head = 2.0 * N * d * V; break;
    // The masked-LM loss runs the head on the selected positions only (15 %: masked_lm, bench).
    case HeadKind::MLM: f.head = 0.15 * (2.0 * N * d * d + 2.0 * N * d * V); break;
    case HeadKind::Classification:  // pooled dense d×d (dense_tanh only) then d×classes, one row per sequence
      f.head = 2.0 * static_cast<double>(batch) * d *
               ((config.classifier == Classifier::DenseTanh ? d : 0.0) + static_cast<double>(config.num_classes));
      break;
    case HeadKind::Retrieval:  // two encodings pooled: [4d → d] then [d → classes]
      f.head = 2.0 * static_cast<double>(batch) * d * (4.0 * d + static_cast<double>(config.num_classes));
      break;
  }
  return f;
}

}  // namespace tn
