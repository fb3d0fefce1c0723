#include "layers/positional/relative_encoding.h"

#include <cmath>

#include "layers/attention/attention_ops.h"

namespace tn {

RelativeEncoding::RelativeEncoding(Relative kind, int64_t n_heads, int64_t d_head,
                                   ParamStore& store, const std::string& prefix, Rng& rng)
    : kind_(kind), n_heads_(n_heads) {
  if (kind == Relative::None) return;
  const int64_t half = d_head / 2;
  if (kind == Relative::URPE) {
    theta_ = store.add_parameter(prefix + ".urpe.theta", {half});
    householder_ = store.add_buffer(prefix + ".urpe.householder", {d_head});
    double norm = 0.0;
    std::vector<double> v(d_head);
    for (double& x : v) {
      x = rng.normal();
      norm += x * x;
    }
    norm = std::sqrt(norm);
    for (int64_t i = 0; i < d_head; ++i)
      householder_->value.data()[i] = static_cast<float>(v[i] / norm);
  } else {
    theta_ = make_var(Tensor::empty({half}), false);
  }
  for (int64_t m = 0; m < half; ++m)
    theta_->value.data()[m] =
        static_cast<float>(std::pow(10000.0, -2.0 * static_cast<double>(m) / d_head));
}

Var RelativeEncoding::apply(ForwardContext& ctx, const Var& x, int64_t period,
                           int64_t offset) const {
  if (kind_ == Relative::None) return x;
  return relative_position(ctx.tape, x, n_heads_, theta_, householder_, period, offset);
}

}  // namespace tn
