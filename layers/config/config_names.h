#pragma once
// The spellings of the model config's enums: one table per enum, read by the model section
// (layers/config/model_config_json) and the token mixers' option sections
// (layers/attention/*_entry.cpp), written back by to_string (layers/config/model_config.h) through
// the same table, so a name is spelled once. The token mixers' names are the mixer table's
// (layers/attention/mixer_table.h), the input kinds' the input table's (layers/inputs/input_table.h).
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/platform/config/json_section.h"
#include "layers/config/model_config.h"

namespace tn {

/// Spelling → value, in the order error messages list the choices (JsonSection::choice).
template <class E>
using NameList = std::vector<std::pair<std::string, E>>;

/// The name of `value` in `names`. Throws ShapeError for a value the table lacks.
template <class E>
const std::string& name_of(E value, const NameList<E>& names) {
  for (const auto& [name, v] : names)
    if (v == value) return name;
  throw ShapeError("[config_names] an enum value without a name: add it to its table");
}

/// "decoder", "encoder".
const NameList<Arch>& arch_names();
/// "1+elu", "elu", "relu" (the reference's KERNELS).
const NameList<Kernel>& kernel_names();
/// "silu", "gelu", "relu", "identity".
const NameList<Activation>& activation_names();
/// "glu", "ffn".
const NameList<ChannelMixerKind>& channel_mixer_names();
/// "sinusoidal", "learned", "none", "sinusoidal_interleaved".
const NameList<Positional>& positional_names();
/// "urpe", "rope", "none".
const NameList<Relative>& relative_names();
/// "lm", "mlm", "classification", "retrieval".
const NameList<HeadKind>& head_names();
/// "mean", "cls", "last".
const NameList<Pooling>& pooling_names();
/// "dense_tanh", "linear".
const NameList<Classifier>& classifier_names();
/// "relu", "softmax": DiagAttention's inner attention.
const NameList<DiagInner>& diag_inner_names();

/// "layernorm", "rmsnorm", "srmsnorm", "batchnorm", "none". batchnorm is accepted for the LRA
/// "synbatch" setting; the reference has none.
const NameList<NormKind>& norm_names();

/// A norm key as the reference's _norm_name reads it: absent → `fallback`; null or false → none;
/// true → layernorm; otherwise a name out of norm_names(). Throws ConfigIssue at the key's path.
NormKind read_norm(const JsonSection& section, const std::string& key, NormKind fallback);

}  // namespace tn
