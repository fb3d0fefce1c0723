#pragma once
// The token mixers, one entry each (docs/model.md §6–8): the name a config uses, how its
// `attention.<name>` options are read and written, how it is built, its FLOPs, how it decodes, and
// the option sets the table-driven tests run it with. Each entry is defined beside its mixer
// (layers/attention/<mixer>_entry.cpp); mixer_table() lists them in the reference's order (MIXERS:
// softmax, linear, norm_attention, diag, performer, cosformer), then the mixers the reference
// lacks (diag_norm_parallel), which is also the order of the `attention:` keys in a written config
// and of the names in error messages.
//
// Adding a mixer: its MixerKind value (and an options struct, a member of AttentionOptions, if it
// has options) in layers/config/model_config.h, its module, its <mixer>_entry.cpp, and its line in
// mixer_table.cpp (a mixer kept outside the library: add_mixer below).
// The config reader and writer, the registry, the FLOP counts, incremental decoding and the tests
// of causality, padding, gradients, decoding and option round trips then pick it up from here.
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/platform/config/json_section.h"
#include "core/runtime/rng.h"
#include "layers/config/config_names.h"
#include "layers/config/model_config.h"
#include "layers/module/module.h"
#include "layers/module/param_store.h"

namespace tn {

/// How a causal mixer decodes one token at a time (TokenMixer::start_decode / decode_step).
enum class DecodeForm {
  /// A state whose size does not grow with the position: the recurrent kv_state of linear,
  /// NormAttention and Performer; DiagAttention's current block (at most block_size rows).
  RecurrentState,
  /// A cache that grows by one row per token (softmax's KV cache).
  Cache,
  /// No incremental form: start_decode() refuses, and the model recomputes the whole prefix at
  /// each new token (cosFormer, whose re-weighting depends on the total length).
  RecomputePrefix,
};

/// One finite-difference check of a mixer module on random input [batch, seq_len, d_model]:
/// gradients w.r.t. the input and every parameter (URPE's angles only when with_theta), central
/// differences with step `eps`.
struct GradProbe {
  int64_t batch;
  int64_t seq_len;
  bool with_theta;
  double eps;
};

/// An option set the table-driven tests build a mixer with (tests/layers/test_mixer_properties.cpp,
/// test_attention_modules.cpp, generation/test_decode.cpp, test_mixer_table.cpp): `setup` sets the
/// variant's options (and any model option it needs, such as relative: rope) on a small model
/// config whose other options keep their defaults.
struct MixerVariant {
  std::string_view name;
  void (*setup)(ModelConfig& config);
  /// The length causality is probed around (chunk or block size C): lengths 1, C−1, C, C+1, 3C+5.
  int64_t probe_size;
  /// Module-level finite-difference checks; empty when this variant is not checked that way.
  std::vector<GradProbe> grad_probes = {};
};

/// One token mixer. Every function pointer is set.
struct MixerEntry {
  MixerKind kind;
  /// The YAML/JSON spelling (token_mixer, layers[i], the attention.<name> key).
  std::string_view name;
  DecodeForm decode;
  /// Reads this mixer's `attention.<name>` section into its member of `options` (keys left out take
  /// the defaults of the options struct). Unknown keys: ConfigIssue when strict_keys, else a warning.
  /// Throws ConfigIssue at the key's full path for a bad value.
  void (*resolve)(const JsonSection& section, bool strict_keys, AttentionOptions& options);
  /// This mixer's member of `options` as the reference writes it in a checkpoint's config (exact
  /// keys, spellings and JSON types; an empty object when the mixer has no options).
  nlohmann::json (*to_json)(const AttentionOptions& options);
  /// The module with its options from config.attention, parameters under `prefix`
  /// (e.g. "layers.3.token_mixer"). Throws ConfigError for options this build cannot run.
  std::unique_ptr<TokenMixer> (*make)(const ModelConfig& config, ParamStore& store, const std::string& prefix,
                                      Rng& rng);
  /// Forward FLOPs of the core (the products between q, k and v) over `batch` sequences of
  /// `seq_len` tokens (experiments/bench/bench_flops.h gives the convention and the formulas).
  double (*core_flops)(const ModelConfig& config, int64_t batch, int64_t seq_len, bool causal);
  /// Forward FLOPs of the projections (q/k/v/out, feature maps) over `batch` × `seq_len` tokens.
  double (*projection_flops)(const ModelConfig& config, int64_t batch, int64_t seq_len);
  /// Floats one layer of this mixer keeps for its backward beyond the per-position activations of
  /// the memory floor (experiments/runner/memory_check.h), over `batch` sequences of `seq_len`:
  /// softmax attention's B·H·n² probabilities. Null: nothing beyond them.
  double (*saved_floats)(const ModelConfig& config, int64_t batch, int64_t seq_len) = nullptr;
  /// One layer's parameters, for the memory check before a model is built (mixer_parameters).
  /// Null: q, k, v and output projections with their biases, 4·(d² + d).
  double (*parameters)(const ModelConfig& config) = nullptr;
  /// Values one layer stores in a checkpoint beside its parameters (buffers: Performer's random
  /// features), for the size floor a checkpoint's config is checked against
  /// (layers/config/parameter_floor.h), and the option that sizes them as the size message names
  /// it ("attention.performer.features 256"). Null: no buffers.
  double (*buffers)(const ModelConfig& config) = nullptr;
  std::string (*buffer_option)(const ModelConfig& config) = nullptr;
  /// At least one; every table-driven test runs each of them.
  std::vector<MixerVariant> test_variants;
  /// Why no variant has grad_probes (the module cannot be checked by plain finite differences and
  /// is checked another way); empty when some variant has them.
  std::string_view no_grad_probes_because = {};
  /// Whether the PyTorch reference has this mixer. Its section is then in every written config, as
  /// the reference writes them (the golden resolved configs); a mixer it lacks writes its section
  /// only when a layer uses it, so configs of models without it read the same in both.
  bool in_reference = true;
};

/// One layer of `entry`'s parameters under `config`: entry.parameters, else 4·(d² + d).
double mixer_parameters(const MixerEntry& entry, const ModelConfig& config);

/// Every token mixer, in the reference's order (see the top of this file), then those add_mixer
/// added.
const std::vector<MixerEntry>& mixer_table();

/// The MixerKind values add_mixer hands out start here; the enum's own stay below.
constexpr int kFirstAddedMixerKind = 1000;

/// Adds a token mixer that lives outside this library (a program's own, or the test suite's
/// walkthrough example, tests/layers/walkthroughs/) after the table's, and returns the MixerKind
/// it is given (entry.kind is ignored): kFirstAddedMixerKind, then the next values. Such a mixer
/// has no options of its own in AttentionOptions, so its resolve and to_json see an empty
/// section. Call it before any config is read (a static initialiser will do), from one thread;
/// the strings must outlive the process. Throws std::invalid_argument for a name already in the
/// table.
MixerKind add_mixer(MixerEntry entry);

/// The entry named `name` ("norm_attention"), or nullptr.
const MixerEntry* find_mixer(std::string_view name);

/// The entry of `kind`, or nullptr (a MixerKind without an entry).
const MixerEntry* find_mixer(MixerKind kind);

/// The entry of `kind`; for a kind without one throws ConfigError "<where>: unknown token mixer
/// MixerKind(7): the mixer table has softmax, linear, ..." (`where` names the config key, e.g.
/// "model.layers (layers.3.token_mixer)"; left out when empty).
const MixerEntry& mixer_entry(MixerKind kind, const std::string& where = "");

/// The names of mixer_table(), in its order (the `attention:` key order of a written config).
std::vector<std::string> mixer_names();

/// Name → kind for JsonSection::choice, in table order.
NameList<MixerKind> mixer_choices();

/// Reads the `attention` section: every key must name a mixer (ConfigIssue listing the names,
/// whatever strict_keys says, as the reference does), then each entry reads its own section.
AttentionOptions resolve_attention_json(const JsonSection& attention, bool strict_keys);

/// The `attention` object of a checkpoint's config, keyed by name: the section of every mixer the
/// reference has, and of any other mixer that one of `layers` uses.
nlohmann::json attention_to_json(const AttentionOptions& options, const std::vector<MixerKind>& layers);

}  // namespace tn
