// The naive references of batch_norm (float64, unthreaded), which the op's tests compare against.
#include "core/runtime/ops/batch_norm.h"

#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/runtime/ops/batch_norm_layout.h"

namespace tn {

namespace {

struct NaiveStats {
  std::vector<double> mean, var;  // [d]; biased var in training
};

NaiveStats naive_stats(const Tensor& x, const BatchNormLayout& l, const BatchNormState& state, bool training,
                       const std::vector<uint8_t>* row_valid) {
  const int64_t d = l.d;
  NaiveStats s{std::vector<double>(d, 0.0), std::vector<double>(d, 0.0)};
  if (!training) {
    for (int64_t j = 0; j < d; ++j) {
      s.mean[j] = state.running_mean.data()[j];
      s.var[j] = state.running_var.data()[j];
    }
    return s;
  }
  const float* xp = x.data();
  auto real = [&](int64_t i) { return !row_valid || (*row_valid)[i]; };
  for (int64_t i = 0; i < l.rows; ++i)
    if (real(i))
      for (int64_t j = 0; j < d; ++j) s.mean[j] += xp[i * d + j];
  for (int64_t j = 0; j < d; ++j) s.mean[j] /= static_cast<double>(l.n_real);
  for (int64_t i = 0; i < l.rows; ++i)
    if (real(i))
      for (int64_t j = 0; j < d; ++j) {
        const double c = xp[i * d + j] - s.mean[j];
        s.var[j] += c * c;
      }
  for (int64_t j = 0; j < d; ++j) s.var[j] /= static_cast<double>(l.n_real);
  return s;
}

}  // namespace

Tensor batch_norm_forward_naive(const Tensor& x, const Tensor* weight, const Tensor* bias,
                                const BatchNormState& state, bool training,
                                const std::vector<uint8_t>* row_valid, Tensor* batch_mean,
                                Tensor* batch_var) {
  const BatchNormLayout l = check_batch_norm_args(x, weight, bias, state, training, row_valid);
  const int64_t d = l.d;
  const NaiveStats s = naive_stats(x, l, state, training, row_valid);
  Tensor y = Tensor::zeros(x.shape());
  const float* xp = x.data();
  float* yp = y.data();
  for (int64_t i = 0; i < l.rows; ++i) {
    if (row_valid && !(*row_valid)[i]) continue;
    for (int64_t j = 0; j < d; ++j) {
      const double xhat = (xp[i * d + j] - s.mean[j]) / std::sqrt(s.var[j] + state.eps);
      yp[i * d + j] = static_cast<float>(xhat * (weight ? weight->data()[j] : 1.0) +
                                         (bias ? bias->data()[j] : 0.0));
    }
  }
  if (training && batch_mean) {
    *batch_mean = Tensor::empty({d});
    for (int64_t j = 0; j < d; ++j) batch_mean->data()[j] = static_cast<float>(s.mean[j]);
  }
  if (training && batch_var) {
    *batch_var = Tensor::empty({d});
    for (int64_t j = 0; j < d; ++j) batch_var->data()[j] = static_cast<float>(s.var[j]);
  }
  return y;
}

BatchNormGrads batch_norm_backward_naive(const Tensor& x, const Tensor& dy, const Tensor* weight,
                                         const BatchNormState& state, bool training,
                                         const std::vector<uint8_t>* row_valid) {
  const BatchNormLayout l = check_batch_norm_args(x, weight, nullptr, state, training, row_valid);
  if (dy.shape() != x.shape())
    throw ShapeError("[batch_norm_backward_naive] dy " + shape_str(dy.shape()) + " vs x " +
                     shape_str(x.shape()));
  const int64_t d = l.d;
  const NaiveStats s = naive_stats(x, l, state, training, row_valid);
  auto real = [&](int64_t i) { return !row_valid || (*row_valid)[i]; };
  const float* xp = x.data();
  const float* gp = dy.data();
  std::vector<double> rstd(d), sum_g(d, 0.0), sum_gh(d, 0.0), dw(d, 0.0), db(d, 0.0);
  for (int64_t j = 0; j < d; ++j) rstd[j] = 1.0 / std::sqrt(s.var[j] + state.eps);
  auto w_at = [&](int64_t j) { return weight ? static_cast<double>(weight->data()[j]) : 1.0; };
  for (int64_t i = 0; i < l.rows; ++i) {
    if (!real(i)) continue;
    for (int64_t j = 0; j < d; ++j) {
      const double xhat = (xp[i * d + j] - s.mean[j]) * rstd[j];
      dw[j] += gp[i * d + j] * xhat;
      db[j] += gp[i * d + j];
      sum_g[j] += gp[i * d + j] * w_at(j);
      sum_gh[j] += gp[i * d + j] * w_at(j) * xhat;
    }
  }
  BatchNormGrads g{Tensor::zeros(x.shape()), Tensor::empty({d}), Tensor::empty({d})};
  for (int64_t i = 0; i < l.rows; ++i) {
    if (!real(i)) continue;
    for (int64_t j = 0; j < d; ++j) {
      const double gw = gp[i * d + j] * w_at(j);
      double v = gw;
      if (training) {  // dx = rstd (g − mean(g) − xhat · mean(g xhat))
        const double xhat = (xp[i * d + j] - s.mean[j]) * rstd[j];
        const double n = static_cast<double>(l.n_real);
        v = gw - sum_g[j] / n - xhat * sum_gh[j] / n;
      }
      g.dx.data()[i * d + j] = static_cast<float>(rstd[j] * v);
    }
  }
  for (int64_t j = 0; j < d; ++j) {
    g.dweight.data()[j] = static_cast<float>(dw[j]);
    g.dbias.data()[j] = static_cast<float>(db[j]);
  }
  return g;
}

}  // namespace tn
