#include "layers/norms/norm.h"

#include "core/error.h"
#include "core/ops/layer_norm.h"
#include "core/ops/rms_norm.h"

namespace tn {

Norm::Norm(NormKind kind, int64_t d, ParamStore& store, const std::string& prefix) : kind_(kind) {
  if (kind == NormKind::RMSNorm || kind == NormKind::LayerNorm) {
    weight_ = store.add_parameter(prefix + ".weight", {d});
    weight_->value.fill(1.0f);
  }
  if (kind == NormKind::LayerNorm) bias_ = store.add_parameter(prefix + ".bias", {d});
  if (kind == NormKind::BatchNorm)
    throw ConfigError(prefix + ": batchnorm is not available yet; use layernorm, rmsnorm or srmsnorm");
}

Var Norm::forward(ForwardContext& ctx, const Var& x) const {
  switch (kind_) {
    case NormKind::None: return x;
    case NormKind::SRMSNorm: return rms_norm(ctx.tape, x, nullptr);
    case NormKind::RMSNorm: return rms_norm(ctx.tape, x, weight_);
    case NormKind::LayerNorm: return layer_norm(ctx.tape, x, weight_, bias_);
    case NormKind::BatchNorm: break;
  }
  throw ConfigError("batchnorm is not available yet");
}

}  // namespace tn
