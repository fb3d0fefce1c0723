#include "layers/config/model_config.h"

#include "layers/attention/mixer_table.h"
#include "layers/config/config_names.h"

namespace tn {

std::string to_string(MixerKind v) {
  if (const MixerEntry* entry = find_mixer(v)) return std::string(entry->name);
  return "MixerKind(" + std::to_string(static_cast<int>(v)) + ")";
}

std::string to_string(Kernel v) { return name_of(v, kernel_names()); }
std::string to_string(NormKind v) { return name_of(v, norm_names()); }
std::string to_string(Activation v) { return name_of(v, activation_names()); }
std::string to_string(Positional v) { return name_of(v, positional_names()); }
std::string to_string(Relative v) { return name_of(v, relative_names()); }

}  // namespace tn
