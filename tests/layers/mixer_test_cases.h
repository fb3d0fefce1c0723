#pragma once
// The mixer cases of the table-driven tests: every test variant of every entry of the mixer table
// (layers/attention/mixer_table.h), so a mixer added to the table is tested without anyone
// listing it here.
#include <string>
#include <vector>

#include "layers/attention/mixer_table.h"

namespace tn::mixer_test {

struct MixerCase {
  const MixerEntry* entry;
  const MixerVariant* variant;
  /// "diag: diag softmax, block 16" (for INFO and MESSAGE).
  std::string name() const { return std::string(entry->name) + ": " + std::string(variant->name); }
  /// `base` with this variant's options, every layer this mixer.
  ModelConfig apply(ModelConfig base) const {
    base.layers.assign(static_cast<size_t>(base.n_layers), entry->kind);
    variant->setup(base);
    return base;
  }
};

/// Every (entry, variant) of mixer_table(), in table order; `filter` keeps entries it accepts.
inline std::vector<MixerCase> mixer_cases(bool (*filter)(const MixerEntry&) = nullptr) {
  std::vector<MixerCase> cases;
  for (const MixerEntry& entry : mixer_table())
    if (!filter || filter(entry))
      for (const MixerVariant& variant : entry.test_variants) cases.push_back({&entry, &variant});
  return cases;
}

}  // namespace tn::mixer_test
