#include "layers/attention/projections.h"

#include <cmath>

#include "core/runtime/ops/linear.h"
#include "layers/module/init.h"

namespace tn {

Var Projection::forward(ForwardContext& ctx, const Var& x) const {
  return linear(ctx.tape, x, weight, bias);
}

Projection make_linear(int64_t d_in, int64_t d_out, ParamStore& store, const std::string& prefix,
                       Rng& rng, bool bias) {
  Projection p;
  p.weight = store.add_parameter(prefix + ".weight", {d_out, d_in});
  if (bias) p.bias = store.add_parameter(prefix + ".bias", {d_out});
  linear_default(p.weight->value, bias ? &p.bias->value : nullptr, rng);
  return p;
}

AttentionProjections::AttentionProjections(int64_t d_model, ParamStore& store,
                                           const std::string& prefix, double qkv_gain,
                                           bool with_out, Rng& rng)
    : has_out(with_out) {
  q = make_linear(d_model, d_model, store, prefix + ".q_proj", rng);
  k = make_linear(d_model, d_model, store, prefix + ".k_proj", rng);
  v = make_linear(d_model, d_model, store, prefix + ".v_proj", rng);
  for (Projection* p : {&q, &k, &v}) xavier_uniform(p->weight->value, qkv_gain, rng);
  if (has_out) {
    out = make_linear(d_model, d_model, store, prefix + ".out_proj", rng);
    xavier_uniform(out.weight->value, 1.0, rng);
    out.bias->value.zero();
  }
}

Var AttentionProjections::project_out(ForwardContext& ctx, const Var& x) const {
  return has_out ? out.forward(ctx, x) : x;
}

}  // namespace tn
