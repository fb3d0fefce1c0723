#pragma once
// Relative position encoding applied to q and k inside a token mixer (docs/model.md §4):
// URPE = fixed Householder reflection + rotary with learned angles ("<prefix>.urpe.theta" [d_head/2],
// buffer "<prefix>.urpe.householder" [d_head]); RoPE = rotary with fixed angles 10000^(−2m/d_head);
// none = identity.
#include <string>

#include "core/runtime/rng.h"
#include "layers/config/model_config.h"
#include "layers/module/module.h"
#include "layers/module/param_store.h"

namespace tn {

class RelativeEncoding {
 public:
  RelativeEncoding(Relative kind, int64_t n_heads, int64_t d_head, ParamStore& store,
                   const std::string& prefix, Rng& rng);
  /// x: [B, T, n_heads·d_head]; positions offset + t, or (offset + t) mod period when period > 0.
  /// offset: the absolute position of row 0 (incremental decoding feeds one row at a time).
  Var apply(ForwardContext& ctx, const Var& x, int64_t period = 0, int64_t offset = 0) const;

 private:
  Relative kind_;
  int64_t n_heads_;
  Var theta_, householder_;
};

}  // namespace tn
