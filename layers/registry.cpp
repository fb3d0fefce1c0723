#include "layers/registry.h"

#include "core/error.h"
#include "layers/attention/cosformer.h"
#include "layers/attention/diag_attention.h"
#include "layers/attention/linear_attention.h"
#include "layers/attention/performer.h"
#include "layers/attention/softmax_attention.h"
#include "layers/mixers/glu.h"

namespace tn {

std::unique_ptr<TokenMixer> make_token_mixer(const ModelConfig& config, MixerKind kind,
                                             ParamStore& store, const std::string& prefix,
                                             Rng& rng) {
  switch (kind) {
    case MixerKind::Softmax: return std::make_unique<SoftmaxAttention>(config, store, prefix, rng);
    case MixerKind::Linear:
      return std::make_unique<LinearAttention>(config, config.attention.linear, store, prefix, rng);
    case MixerKind::NormAttention: {
      LinearOptions options;
      options.kernel = config.attention.norm_attention.kernel;
      options.scaling = false;
      options.norm = config.attention.norm_attention.norm;
      return std::make_unique<LinearAttention>(config, options, store, prefix, rng);
    }
    case MixerKind::Diag:
      return std::make_unique<DiagAttention>(config, config.attention.diag, store, prefix, rng);
    case MixerKind::Performer:
      return std::make_unique<Performer>(config, config.attention.performer, store, prefix, rng);
    case MixerKind::Cosformer:
      return std::make_unique<CosFormer>(config, config.attention.cosformer, store, prefix, rng);
  }
  throw ConfigError("model.layers: unknown token mixer");
}

std::unique_ptr<ChannelMixer> make_channel_mixer(const ModelConfig& config, ParamStore& store,
                                                 const std::string& prefix, Rng& rng) {
  const auto& cm = config.channel_mixer;
  if (cm.type == ChannelMixerKind::GLU)
    return std::make_unique<GLU>(config.d_model, cm.d_ff, cm.activation, store, prefix, rng);
  return std::make_unique<FFN>(config.d_model, cm.d_ff, cm.activation, store, prefix, rng);
}

}  // namespace tn
