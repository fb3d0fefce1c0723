#include "layers/config/config_names.h"

namespace tn {

const NameList<Arch>& arch_names() {
  static const NameList<Arch> names = {{"decoder", Arch::Decoder}, {"encoder", Arch::Encoder}};
  return names;
}

const NameList<Activation>& activation_names() {
  static const NameList<Activation> names = {
      {"silu", Activation::SiLU}, {"gelu", Activation::GELU}, {"relu", Activation::ReLU}, {"identity", Activation::Identity}};
  return names;
}

const NameList<ChannelMixerKind>& channel_mixer_names() {
  static const NameList<ChannelMixerKind> names = {{"glu", ChannelMixerKind::GLU}, {"ffn", ChannelMixerKind::FFN}};
  return names;
}

const NameList<Positional>& positional_names() {
  static const NameList<Positional> names = {{"sinusoidal", Positional::Sinusoidal},
                                             {"learned", Positional::Learned},
                                             {"none", Positional::None},
                                             {"sinusoidal_interleaved", Positional::SinusoidalInterleaved}};
  return names;
}

const NameList<Relative>& relative_names() {
  static const NameList<Relative> names = {{"urpe", Relative::URPE}, {"rope", Relative::RoPE}, {"none", Relative::None}};
  return names;
}

const NameList<HeadKind>& head_names() {
  static const NameList<HeadKind> names = {{"lm", HeadKind::LM},
                                           {"mlm", HeadKind::MLM},
                                           {"classification", HeadKind::Classification},
                                           {"retrieval", HeadKind::Retrieval}};
  return names;
}

const NameList<Pooling>& pooling_names() {
  static const NameList<Pooling> names = {{"mean", Pooling::Mean}, {"cls", Pooling::Cls}, {"last", Pooling::Last}};
  return names;
}

const NameList<Classifier>& classifier_names() {
  static const NameList<Classifier> names = {{"dense_tanh", Classifier::DenseTanh}, {"linear", Classifier::Linear}};
  return names;
}

const NameList<DiagInner>& diag_inner_names() {
  static const NameList<DiagInner> names = {{"relu", DiagInner::Relu}, {"softmax", DiagInner::Softmax}};
  return names;
}

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
