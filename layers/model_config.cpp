#include "layers/model_config.h"

#include "layers/attention/mixer_table.h"

namespace tn {

std::string to_string(MixerKind v) {
  if (const MixerEntry* entry = find_mixer(v)) return std::string(entry->name);
  return "MixerKind(" + std::to_string(static_cast<int>(v)) + ")";
}

std::string to_string(Kernel v) {
  switch (v) {
    case Kernel::OnePlusElu: return "1+elu";
    case Kernel::Elu: return "elu";
    case Kernel::Relu: return "relu";
  }
  return "?";
}

std::string to_string(NormKind v) {
  switch (v) {
    case NormKind::None: return "none";
    case NormKind::LayerNorm: return "layernorm";
    case NormKind::RMSNorm: return "rmsnorm";
    case NormKind::SRMSNorm: return "srmsnorm";
    case NormKind::BatchNorm: return "batchnorm";
  }
  return "?";
}

std::string to_string(Activation v) {
  switch (v) {
    case Activation::SiLU: return "silu";
    case Activation::GELU: return "gelu";
    case Activation::ReLU: return "relu";
    case Activation::Identity: return "identity";
  }
  return "?";
}

std::string to_string(Positional v) {
  switch (v) {
    case Positional::Sinusoidal: return "sinusoidal";
    case Positional::Learned: return "learned";
    case Positional::None: return "none";
    case Positional::SinusoidalInterleaved: return "sinusoidal_interleaved";
  }
  return "?";
}

std::string to_string(Relative v) {
  switch (v) {
    case Relative::URPE: return "urpe";
    case Relative::RoPE: return "rope";
    case Relative::None: return "none";
  }
  return "?";
}

}  // namespace tn
