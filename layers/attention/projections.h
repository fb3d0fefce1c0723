#pragma once
// The q/k/v/out projections every token mixer shares (all with bias), registered
// as "<prefix>.{q_proj,k_proj,v_proj,out_proj}.{weight,bias}".
#include <string>

#include "core/runtime/rng.h"
#include "layers/module/module.h"
#include "layers/module/param_store.h"

namespace tn {

struct Projection {
  Var weight, bias;
  Var forward(ForwardContext& ctx, const Var& x) const;
};

struct AttentionProjections {
  Projection q, k, v, out;
  bool has_out = true;
  /// Xavier-uniform q/k/v with `qkv_gain` (1/√2 for every mixer but diag, which uses 1), out
  /// Xavier gain 1 with zero bias; q/k/v biases PyTorch-default (docs/model.md §13).
  AttentionProjections(int64_t d_model, ParamStore& store, const std::string& prefix,
                       double qkv_gain, bool has_out, Rng& rng);
  /// W_o when present, else identity.
  Var project_out(ForwardContext& ctx, const Var& x) const;
};

/// A Linear(d_in → d_out) with PyTorch default init, registered as "<prefix>.{weight,bias}".
Projection make_linear(int64_t d_in, int64_t d_out, ParamStore& store, const std::string& prefix,
                       Rng& rng, bool bias = true);

}  // namespace tn
