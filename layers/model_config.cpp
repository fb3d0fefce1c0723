#include "layers/model_config.h"

namespace tn {

std::string to_string(MixerKind v) {
  switch (v) {
    case MixerKind::Softmax: return "softmax";
    case MixerKind::Linear: return "linear";
    case MixerKind::NormAttention: return "norm_attention";
    case MixerKind::Diag: return "diag";
    case MixerKind::Performer: return "performer";
    case MixerKind::Cosformer: return "cosformer";
  }
  return "?";
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
