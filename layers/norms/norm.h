#pragma once
// Norm over the last axis by kind (paper.md §1.6): srmsnorm (no parameters), rmsnorm (weight),
// layernorm (weight, bias; eps 1e-5), none (identity). Parameters are registered as
// "<prefix>.weight" / "<prefix>.bias".
#include <string>

#include "layers/model_config.h"
#include "layers/module.h"
#include "layers/param_store.h"

namespace tn {

class Norm {
 public:
  Norm(NormKind kind, int64_t d, ParamStore& store, const std::string& prefix);
  /// x: [..., d] → same shape. Throws ConfigError for kinds this build cannot compute.
  Var forward(ForwardContext& ctx, const Var& x) const;
  NormKind kind() const { return kind_; }

 private:
  NormKind kind_;
  Var weight_, bias_;
};

}  // namespace tn
