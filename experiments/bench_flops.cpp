#include "experiments/bench_flops.h"

#include <algorithm>

namespace tn {

double mixer_core_flops(const ModelConfig& config, MixerKind kind, int64_t batch, int64_t seq_len,
                        bool causal) {
  const double bh = static_cast<double>(batch) * static_cast<double>(config.n_heads);
  const double D = static_cast<double>(config.d_head());
  const double T = static_cast<double>(seq_len);
  auto pairs_in_block = [causal](double w) { return causal ? w * (w + 1.0) / 2.0 : w * w; };
  auto linear_family = [&](double key_width, bool den) { return bh * 4.0 * T * key_width * (D + (den ? 1.0 : 0.0)); };
  switch (kind) {
    case MixerKind::Softmax: return bh * 4.0 * pairs_in_block(T) * D;
    case MixerKind::Diag: {
      const int64_t W = std::max<int64_t>(config.attention.diag.block_size, 1);
      double pairs = 0;
      for (int64_t start = 0; start < seq_len; start += W)
        pairs += pairs_in_block(static_cast<double>(std::min(W, seq_len - start)));
      return bh * 4.0 * pairs * D;
    }
    case MixerKind::Linear: return linear_family(D, config.attention.linear.scaling);
    case MixerKind::NormAttention: return linear_family(D, false);
    case MixerKind::Performer:
      return linear_family(static_cast<double>(config.attention.performer.features), true);
    case MixerKind::Cosformer: return linear_family(2.0 * D, true);
  }
  return 0.0;
}

double mixer_projection_flops(const ModelConfig& config, MixerKind kind, int64_t batch, int64_t seq_len) {
  const double N = static_cast<double>(batch) * static_cast<double>(seq_len);
  const double d = static_cast<double>(config.d_model);
  double projections = 4.0;
  if (kind == MixerKind::Cosformer && !config.attention.cosformer.out_proj) projections = 3.0;
  double flops = projections * 2.0 * N * d * d;
  if (kind == MixerKind::Performer)  // q and k onto m features per head: [N·H, D] × [D, m]
    flops += 2.0 * 2.0 * N * static_cast<double>(config.n_heads) *
             static_cast<double>(config.attention.performer.features) * static_cast<double>(config.d_head());
  return flops;
}

ModelFlops model_flops(const ModelConfig& config, int64_t batch, int64_t seq_len) {
  ModelFlops f;
  const double N = static_cast<double>(batch) * static_cast<double>(seq_len);
  const double d = static_cast<double>(config.d_model);
  const double d_ff = static_cast<double>(config.channel_mixer.d_ff);
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
    case HeadKind::MLM: f.head = 2.0 * N * d * d + 2.0 * N * d * V; break;
    case HeadKind::Classification:  // pooled dense d×d then d×classes, one row per sequence
      f.head = 2.0 * static_cast<double>(batch) * d * (d + static_cast<double>(config.num_classes));
      break;
    case HeadKind::Retrieval:  // two encodings pooled: [4d → d] then [d → classes]
      f.head = 2.0 * static_cast<double>(batch) * d * (4.0 * d + static_cast<double>(config.num_classes));
      break;
  }
  return f;
}

}  // namespace tn
