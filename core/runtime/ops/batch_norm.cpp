#include "core/runtime/ops/batch_norm.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <string>

#include "core/runtime/autograd/grad_accum.h"
#include "core/platform/comm/communicator.h"
#include "core/error.h"
#include "core/runtime/ops/batch_norm_block.h"
#include "core/runtime/ops/batch_norm_layout.h"
#include "core/runtime/parallel.h"

namespace tn {
namespace {

// Forward on a contiguous [N, d] block: src → dst (may alias). Training writes the block's mean
// and biased var into mean/var; inference reads them.
void forward_block(int64_t n_real, int64_t d, float eps, bool training, const float* weight,
                   const float* bias, const float* src, float* dst, float* mean, float* var) {
  if (training) batch_norm_block_stats(src, n_real, d, mean, var);
  batch_norm_block_normalize(src, n_real, d, mean, var, eps, weight, bias, dst);
}

// Backward on a contiguous [N, d] block: diff_dst → diff_src (may alias); dweight/dbias are
// written (not added) when weight/bias are non-null.
void backward_block(int64_t n_real, int64_t d, float eps, bool training, const float* weight,
                    const float* bias, const float* src, const float* mean, const float* var,
                    const float* diff_dst, float* diff_src, float* dweight, float* dbias) {
  batch_norm_block_backward(src, diff_dst, n_real, d, mean, var, eps, weight, training, diff_src,
                            weight ? dweight : nullptr, bias ? dbias : nullptr);
}

const Tensor* value_or_null(const Var& v) { return v ? &v->value : nullptr; }

// SyncBatchNorm: statistics over the real rows of every rank. Each rank sums Σx and Σx² per
// feature (float64) and its row count, the ranks add them up, and the mean and biased variance
// follow; the block is then normalised with them as given statistics. Returns the ranks' rows.
int64_t synced_stats(const BatchNormLayout& l, const float* x, Communicator& comm, float* mean, float* var) {
  const int64_t d = l.d;
  std::vector<double> sums(static_cast<size_t>(2 * d + 1), 0.0);
  for (int64_t i = 0; i < l.rows; ++i) {
    if (l.masked && l.block_row[i] < 0) continue;
    const float* row = x + i * d;
    for (int64_t j = 0; j < d; ++j) {
      sums[j] += row[j];
      sums[d + j] += static_cast<double>(row[j]) * row[j];
    }
  }
  sums[2 * d] = static_cast<double>(l.n_real);
  comm.sum(sums.data(), 2 * d + 1);
  const auto n = static_cast<int64_t>(sums[2 * d]);
  if (n < 2)
    throw ShapeError("[batch_norm] " + std::to_string(n) + " real rows over all " + std::to_string(comm.size()) +
                     " ranks: training statistics need at least 2; use a larger batch");
  for (int64_t j = 0; j < d; ++j) {
    const double m = sums[j] / static_cast<double>(n);
    mean[j] = static_cast<float>(m);
    var[j] = static_cast<float>(std::max(0.0, sums[d + j] / static_cast<double>(n) - m * m));
  }
  return n;
}

// The SyncBatchNorm backward on a contiguous [N, d] block, given dy and the block's own part of
// the statistics' gradient: dx = w/σ · (dy − Σ_all dy / n − x̂ · Σ_all dy·x̂ / n), with the sums
// over every rank's real rows (n of them). dweight = Σ dy·x̂ and dbias = Σ dy over this rank's rows
// only: the parameters' gradients are summed across ranks with all the others.
void synced_backward_block(int64_t n_local, int64_t d, int64_t n_all, float eps, const float* weight,
                           const float* src, const float* mean, const float* var, const float* diff_dst,
                           float* diff_src, float* dweight, float* dbias, Communicator& comm) {
  std::vector<double> sums(static_cast<size_t>(2 * d), 0.0);  // Σ dy, Σ dy·x̂
  std::vector<double> inv_std(static_cast<size_t>(d));
  for (int64_t j = 0; j < d; ++j) inv_std[j] = 1.0 / std::sqrt(static_cast<double>(var[j]) + eps);
  for (int64_t i = 0; i < n_local; ++i)
    for (int64_t j = 0; j < d; ++j) {
      const double dy = diff_dst[i * d + j], xhat = (src[i * d + j] - mean[j]) * inv_std[j];
      sums[j] += dy;
      sums[d + j] += dy * xhat;
    }
  for (int64_t j = 0; j < d; ++j) {
    if (dbias) dbias[j] = static_cast<float>(sums[j]);
    if (dweight) dweight[j] = static_cast<float>(sums[d + j]);
  }
  comm.sum(sums.data(), 2 * d);
  const double inv_n = 1.0 / static_cast<double>(n_all);
  for (int64_t i = 0; i < n_local; ++i)
    for (int64_t j = 0; j < d; ++j) {
      const double xhat = (src[i * d + j] - mean[j]) * inv_std[j];
      const double w = weight ? weight[j] : 1.0;
      diff_src[i * d + j] = static_cast<float>(w * inv_std[j] *
                                               (diff_dst[i * d + j] - sums[j] * inv_n - xhat * sums[d + j] * inv_n));
    }
}

}  // namespace

BatchNormState batch_norm_state(int64_t d_model, double momentum, double eps) {
  if (d_model < 1)
    throw ShapeError("[batch_norm_state] d_model must be positive, got " + std::to_string(d_model));
  BatchNormState state;
  state.running_mean = Tensor::zeros({d_model});
  state.running_var = Tensor::full({d_model}, 1.0f);
  state.momentum = momentum;
  state.eps = eps;
  return state;
}

/// Folds a training batch's statistics into the running ones (momentum; the variance unbiased over
/// the n_stats rows it came from), as PyTorch's BatchNorm1d does.
void update_running(BatchNormState& state, const Tensor& mean, const Tensor& var, int64_t n_stats) {
  const int64_t d = mean.numel();
  const double m = state.momentum;
  const double unbias = static_cast<double>(n_stats) / static_cast<double>(n_stats - 1);
  float* rm = state.running_mean.data();
  float* rv = state.running_var.data();
  const float* bm = mean.data();
  const float* bv = var.data();
  for (int64_t j = 0; j < d; ++j) {
    rm[j] = static_cast<float>((1.0 - m) * rm[j] + m * bm[j]);
    rv[j] = static_cast<float>((1.0 - m) * rv[j] + m * bv[j] * unbias);
  }
}

/// What batch_norm's backward needs from its forward.
struct BatchNormBackward {
  const Var &x, &weight, &bias, &result;
  const Tensor &mean, &var;
  const BatchNormLayout& l;
  float eps;
  bool training, synced;
  int64_t n_stats;
  Communicator* ranks;
};

/// The gradients of x, weight and bias from result's, through the rows of l (gathered when masked),
/// summed across ranks when synced.
void batch_norm_backward(const BatchNormBackward& b) {
  const Var &x = b.x, &weight = b.weight, &bias = b.bias, &result = b.result;
  const bool training = b.training, synced = b.synced;
  Communicator* ranks = b.ranks;
  const Tensor &mean = b.mean, &var = b.var;
  const BatchNormLayout& l = b.l;
  const float eps = b.eps;
  const int64_t d = l.d, n_real = l.n_real, n_stats = b.n_stats;
  const float* wp = weight ? weight->value.data() : nullptr;
  const float* bp = bias ? bias->value.data() : nullptr;
  Tensor dweight = weight ? Tensor::empty({d}) : Tensor();
  Tensor dbias = bias ? Tensor::empty({d}) : Tensor();
  float* dwp = weight ? dweight.data() : nullptr;
  float* dbp = bias ? dbias.data() : nullptr;
  if (!l.masked) {
    // Straight into x's gradient when it has none yet (GradSink), else into scratch.
    std::unique_ptr<GradSink> sink;
    Tensor discard;
    float* dxp;
    if (x->requires_grad) {
      sink = std::make_unique<GradSink>(x);
      dxp = sink->data();
    } else {
      discard = Tensor::empty(x->value.shape());
      dxp = discard.data();
    }
    if (synced)
      synced_backward_block(n_real, d, n_stats, eps, wp, x->value.data(), mean.data(), var.data(),
                            result->grad().data(), dxp, dwp, dbp, *ranks);
    else
      backward_block(n_real, d, eps, training, wp, bp, x->value.data(), mean.data(),
                     var.data(), result->grad().data(), dxp, dwp, dbp);
    if (sink) sink->commit();
  } else {
    Tensor src = Tensor::empty({l.rows, d});  // all rows: see the forward's block
    Tensor diff = Tensor::empty({l.rows, d});
    batch_norm_gather_rows(l, x->value.data(), src.data());
    batch_norm_gather_rows(l, result->grad().data(), diff.data());
    if (synced)
      synced_backward_block(n_real, d, n_stats, eps, wp, src.data(), mean.data(), var.data(), diff.data(),
                            diff.data(), dwp, dbp, *ranks);
    else
      backward_block(n_real, d, eps, training, wp, bp, src.data(), mean.data(),
                     var.data(), diff.data(), diff.data(), dwp, dbp);
    if (x->requires_grad) {
      GradSink sink(x);
      batch_norm_scatter_rows(l, diff.data(), sink.data());
      sink.commit();
    }
  }
  if (weight && weight->requires_grad) add_inplace(weight->grad_buf().data(), dwp, d);
  if (bias && bias->requires_grad) add_inplace(bias->grad_buf().data(), dbp, d);
}

Var batch_norm(Tape& tape, const Var& x, const Var& weight, const Var& bias,
               BatchNormState& state, bool training, const std::vector<uint8_t>* row_valid,
               Communicator* ranks) {
  const bool synced = training && ranks && ranks->size() > 1;
  BatchNormLayout l = check_batch_norm_args(x->value, value_or_null(weight), value_or_null(bias), state, training,
                        row_valid, synced);
  const int64_t d = l.d, n_real = l.n_real;
  const float eps = static_cast<float>(state.eps);
  const float* wp = weight ? weight->value.data() : nullptr;
  const float* bp = bias ? bias->value.data() : nullptr;

  Tensor y = Tensor::empty(x->value.shape());
  // Statistics used to normalise (and needed by the backward): the batch's in training, a
  // snapshot of the running ones in eval (so a later state update cannot change the backward).
  Tensor mean, var;
  if (training) {
    mean = Tensor::empty({d});
    var = Tensor::empty({d});
  } else {
    mean = state.running_mean.clone();
    var = state.running_var.clone();
  }
  // Synced: the statistics of every rank's rows, then a normalisation with them as given ones.
  const int64_t n_stats = synced ? synced_stats(l, x->value.data(), *ranks, mean.data(), var.data()) : n_real;
  const bool own_stats = training && !synced;
  if (n_real == 0) {
    y.zero();  // eval with everything padded (or a synced rank without rows): defined (all zeros), nothing to normalise
  } else if (!l.masked) {
    forward_block(n_real, d, eps, own_stats, wp, bp, x->value.data(), y.data(), mean.data(),
                  var.data());
  } else {
    // Sized for all rows, not N: the memory pool caches by exact size, and N changes with every
    // mask, so an [N, d] buffer would leave a new cached block behind at each step.
    Tensor block = Tensor::empty({l.rows, d});
    batch_norm_gather_rows(l, x->value.data(), block.data());
    forward_block(n_real, d, eps, own_stats, wp, bp, block.data(), block.data(), mean.data(),
                  var.data());
    batch_norm_scatter_rows(l, block.data(), y.data());
  }

  if (training) update_running(state, mean, var, n_stats);

  Var result = make_var(std::move(y));
  // A synced rank without real rows still takes part in the backward's sum across ranks.
  if (!tape.needs_grad({&x, &weight, &bias}) || (n_real == 0 && !synced)) return result;
  result->requires_grad = true;
  // The row maps are rows long: share them with the closure rather than copy.
  auto layout = std::make_shared<const BatchNormLayout>(std::move(l));
  tape.record([x, weight, bias, result, mean, var, layout, eps, training, synced, n_stats, ranks]() {
    if (!result->has_grad()) return;
    batch_norm_backward({x, weight, bias, result, mean, var, *layout, eps, training, synced, n_stats, ranks});
  });
  return result;
}

}  // namespace tn
