#include "layers/norms/norm.h"

#include "core/error.h"
#include "core/runtime/ops/layer_norm.h"
#include "core/runtime/ops/rms_norm.h"

namespace tn {

Norm::Norm(NormKind kind, int64_t d, ParamStore& store, const std::string& prefix) : kind_(kind) {
  if (kind == NormKind::RMSNorm || kind == NormKind::LayerNorm || kind == NormKind::BatchNorm) {
    weight_ = store.add_parameter(prefix + ".weight", {d});
    weight_->value.fill(1.0f);
  }
  if (kind == NormKind::LayerNorm || kind == NormKind::BatchNorm)
    bias_ = store.add_parameter(prefix + ".bias", {d});
  if (kind == NormKind::BatchNorm) {
    batch_state_ = batch_norm_state(d);
    // The buffers share storage with the state, so loading a checkpoint restores the statistics.
    Var mean = store.add_buffer(prefix + ".running_mean", {d});
    Var var = store.add_buffer(prefix + ".running_var", {d});
    mean->value.copy_from(batch_state_.running_mean);
    var->value.copy_from(batch_state_.running_var);
    batch_state_.running_mean = mean->value;
    batch_state_.running_var = var->value;
  }
}

Var Norm::forward(ForwardContext& ctx, const Var& x) {
  switch (kind_) {
    case NormKind::None: return x;
    case NormKind::SRMSNorm: return rms_norm(ctx.tape, x, nullptr);
    case NormKind::RMSNorm: return rms_norm(ctx.tape, x, weight_);
    case NormKind::LayerNorm: return layer_norm(ctx.tape, x, weight_, bias_);
    case NormKind::BatchNorm:
      return batch_norm(ctx.tape, x, weight_, bias_, batch_state_, ctx.training, ctx.key_valid,
                        ctx.batch_stats_ranks);
  }
  return x;
}

}  // namespace tn
