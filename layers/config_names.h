#pragma once
// Spellings of the option enums that both the model section (layers/model_config_json) and the
// token mixers' option sections (layers/attention/*_entry.cpp) read: feature maps φ and norms,
// the reference's KERNELS and NORMS. Written back with to_string (layers/model_config.h).
#include <string>
#include <utility>
#include <vector>

#include "core/config/json_section.h"
#include "layers/model_config.h"

namespace tn {

/// Spelling → value, in the order error messages list the choices (JsonSection::choice).
template <class E>
using NameList = std::vector<std::pair<std::string, E>>;

/// "1+elu", "elu", "relu".
const NameList<Kernel>& kernel_names();

/// "layernorm", "rmsnorm", "srmsnorm", "batchnorm", "none". batchnorm is accepted for the LRA
/// "synbatch" setting; the reference has none.
const NameList<NormKind>& norm_names();

/// A norm key as the reference's _norm_name reads it: absent → `fallback`; null or false → none;
/// true → layernorm; otherwise a name out of norm_names(). Throws ConfigIssue at the key's path.
NormKind read_norm(const JsonSection& section, const std::string& key, NormKind fallback);

}  // namespace tn
