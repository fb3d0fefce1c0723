#include "layers/module/registry.h"

#include "core/error.h"
#include "layers/attention/mixer_table.h"
#include "layers/channel_mixers/glu.h"

namespace tn {

std::unique_ptr<TokenMixer> make_token_mixer(const ModelConfig& config, MixerKind kind,
                                             ParamStore& store, const std::string& prefix,
                                             Rng& rng) {
  return mixer_entry(kind, "model.layers (" + prefix + ")").make(config, store, prefix, rng);
}

std::unique_ptr<ChannelMixer> make_channel_mixer(const ModelConfig& config, ParamStore& store,
                                                 const std::string& prefix, Rng& rng) {
  const auto& cm = config.channel_mixer;
  if (cm.type == ChannelMixerKind::GLU)
    return std::make_unique<GLU>(config.d_model, cm.d_ff, cm.activation, store, prefix, rng);
  return std::make_unique<FFN>(config.d_model, cm.d_ff, cm.activation, store, prefix, rng);
}

}  // namespace tn
