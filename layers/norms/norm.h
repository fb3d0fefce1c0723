#pragma once
// Norm over the last axis by kind (docs/model.md §3): srmsnorm (no parameters), rmsnorm (weight),
// layernorm (weight, bias; eps 1e-5), batchnorm (weight, bias; statistics over batch×length of the
// real positions, running statistics for evaluation: the official LRA "synbatch"), none.
// Parameters are registered as "<prefix>.weight" / "<prefix>.bias", batchnorm's running
// statistics as buffers "<prefix>.running_mean" / "<prefix>.running_var".
#include <string>

#include "core/runtime/ops/batch_norm.h"
#include "layers/config/model_config.h"
#include "layers/module/module.h"
#include "layers/module/param_store.h"

namespace tn {

class Norm {
 public:
  Norm(NormKind kind, int64_t d, ParamStore& store, const std::string& prefix);
  /// x: [..., d] → same shape (batchnorm: [batch, seq_len, d], padding from ctx.key_valid).
  Var forward(ForwardContext& ctx, const Var& x);
  NormKind kind() const { return kind_; }

 private:
  NormKind kind_;
  Var weight_, bias_;
  BatchNormState batch_state_;
};

}  // namespace tn
