#include "layers/config_names.h"

namespace tn {

const NameList<Kernel>& kernel_names() {
  static const NameList<Kernel> names = {{"1+elu", Kernel::OnePlusElu}, {"elu", Kernel::Elu}, {"relu", Kernel::Relu}};
  return names;
}

const NameList<NormKind>& norm_names() {
  static const NameList<NormKind> names = {{"layernorm", NormKind::LayerNorm}, {"rmsnorm", NormKind::RMSNorm},
                                           {"srmsnorm", NormKind::SRMSNorm},   {"batchnorm", NormKind::BatchNorm},
                                           {"none", NormKind::None}};
  return names;
}

NormKind read_norm(const JsonSection& s, const std::string& key, NormKind fallback) {
  const nlohmann::json* v = s.find(key);
  if (!v) return fallback;
  if (v->is_null() || (v->is_boolean() && !v->get<bool>())) return NormKind::None;
  if (v->is_boolean()) return NormKind::LayerNorm;
  return s.choice(key, fallback, norm_names());
}

}  // namespace tn
