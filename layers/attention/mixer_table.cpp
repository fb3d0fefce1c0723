#include "layers/attention/mixer_table.h"
#include "core/platform/config/registry_table.h"

#include <algorithm>
#include <stdexcept>

#include "core/error.h"

namespace tn {

// The entries, each defined in layers/attention/<mixer>_entry.cpp.
MixerEntry softmax_mixer_entry();
MixerEntry linear_mixer_entry();
MixerEntry norm_attention_mixer_entry();
MixerEntry diag_mixer_entry();
MixerEntry performer_mixer_entry();
MixerEntry cosformer_mixer_entry();
MixerEntry diag_norm_parallel_mixer_entry();

namespace {
std::vector<MixerEntry>& table_of_mixers() {
  static std::vector<MixerEntry> table = {
      softmax_mixer_entry(),   linear_mixer_entry(),    norm_attention_mixer_entry(),
      diag_mixer_entry(),      performer_mixer_entry(), cosformer_mixer_entry(),
      diag_norm_parallel_mixer_entry(),
  };
  return table;
}
}  // namespace

const std::vector<MixerEntry>& mixer_table() { return table_of_mixers(); }

MixerKind add_mixer(MixerEntry entry) {
  entry.kind = next_added_kind<MixerKind>(mixer_table(), kFirstAddedMixerKind);
  const MixerKind kind = entry.kind;
  append_named(table_of_mixers(), std::move(entry), "add_mixer", "a token mixer");
  return kind;
}

const MixerEntry* find_mixer(std::string_view name) {
  for (const MixerEntry& entry : mixer_table())
    if (entry.name == name) return &entry;
  return nullptr;
}

const MixerEntry* find_mixer(MixerKind kind) {
  for (const MixerEntry& entry : mixer_table())
    if (entry.kind == kind) return &entry;
  return nullptr;
}

const MixerEntry& mixer_entry(MixerKind kind, const std::string& where) {
  if (const MixerEntry* entry = find_mixer(kind)) return *entry;
  std::string names;
  for (const std::string& name : mixer_names()) names += (names.empty() ? "" : ", ") + name;
  throw ConfigError((where.empty() ? "" : where + ": ") + "unknown token mixer " + to_string(kind) +
                    ": the mixer table has " + names);
}

std::vector<std::string> mixer_names() {
  std::vector<std::string> names;
  for (const MixerEntry& entry : mixer_table()) names.emplace_back(entry.name);
  return names;
}

NameList<MixerKind> mixer_choices() {
  NameList<MixerKind> choices;
  for (const MixerEntry& entry : mixer_table()) choices.emplace_back(std::string(entry.name), entry.kind);
  return choices;
}

AttentionOptions resolve_attention_json(const JsonSection& attention, bool strict_keys) {
  attention.check_keys(mixer_names(), true);  // the reference rejects unknown mixer names too
  AttentionOptions options;
  for (const MixerEntry& entry : mixer_table())
    entry.resolve(attention.section(std::string(entry.name)), strict_keys, options);
  return options;
}

nlohmann::json attention_to_json(const AttentionOptions& options, const std::vector<MixerKind>& layers) {
  nlohmann::json attention = nlohmann::json::object();
  for (const MixerEntry& entry : mixer_table())
    if (entry.in_reference || std::find(layers.begin(), layers.end(), entry.kind) != layers.end())
      attention[std::string(entry.name)] = entry.to_json(options);
  return attention;
}

double mixer_parameters(const MixerEntry& entry, const ModelConfig& config) {
  if (entry.parameters) return entry.parameters(config);
  const double d = static_cast<double>(config.d_model);
  return 4.0 * (d * d + d);
}

}  // namespace tn
