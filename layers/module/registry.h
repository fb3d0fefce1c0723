#pragma once
// The layer registry: every token mixer and channel mixer is created by name from the resolved
// model config, so an ablation is a config change. Token
// mixers come from the mixer table (layers/attention/mixer_table.h).
#include <memory>
#include <string>

#include "core/runtime/rng.h"
#include "layers/config/model_config.h"
#include "layers/module/module.h"
#include "layers/module/param_store.h"

namespace tn {

/// The token mixer `kind` with its options from config.attention, parameters under `prefix`
/// (e.g. "layers.3.token_mixer"), made by its mixer-table entry (layers/attention/mixer_table.h).
/// Throws ConfigError naming the kind and `prefix` for a kind without an entry, and whatever the
/// mixer's constructor throws for options this build cannot run.
std::unique_ptr<TokenMixer> make_token_mixer(const ModelConfig& config, MixerKind kind,
                                             ParamStore& store, const std::string& prefix, Rng& rng);

/// The channel mixer of config.channel_mixer under `prefix` (e.g. "layers.3.channel_mixer").
std::unique_ptr<ChannelMixer> make_channel_mixer(const ModelConfig& config, ParamStore& store,
                                                 const std::string& prefix, Rng& rng);

}  // namespace tn
