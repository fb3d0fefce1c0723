#pragma once
// BatchNorm over the feature axis of [batch, seq_len, d] ("synbatch" in the official LRA configs,
// docs/model.md §3): statistics over batch×seq_len rows, per feature. Source: PyTorch
// BatchNorm1d semantics (biased variance to normalise, unbiased variance into running_var,
// running = (1 − momentum)·running + momentum·batch_stat). On one process SyncBatchNorm is the same.
//
// Legend: rows = batch·seq_len (all rows of x), real rows = those with row_valid ≠ 0 (N of them).
#include <cstdint>
#include <vector>

#include "core/runtime/autograd/tape.h"
#include "core/platform/comm/communicator.h"

namespace tn {

/// Running statistics of one BatchNorm (buffers, saved in checkpoints as running_mean and
/// running_var). Build with batch_norm_state(d_model).
struct BatchNormState {
  Tensor running_mean, running_var;  // [d]; init 0 and 1
  double momentum = 0.1;             // running = (1 − momentum)·running + momentum·batch_stat
  double eps = 1e-5;                 // added to the variance inside the root
};

/// A fresh state: running_mean = 0, running_var = 1, both [d_model].
/// Throws ShapeError when d_model < 1.
BatchNormState batch_norm_state(int64_t d_model, double momentum = 0.1, double eps = 1e-5);

/// BatchNorm1d on x [batch, seq_len, d] (any [..., d] with ≥ 2 dims works: rows = numel / d),
/// treating the real rows as N samples of d features. Returns y with x's shape:
///   y = (x − mean) / √(var + eps) · weight + bias        (weight, bias: [d], either may be null)
/// training = true: mean and biased var over the real rows; the state is updated with the batch
///   mean and the unbiased var (var · N/(N − 1)). The backward is the full batch-norm gradient
///   through the batch statistics.
/// training = false: mean and var are state.running_{mean,var}; the state is left alone; the
///   backward is the affine map only (statistics are constants).
/// row_valid: null (all rows real) or rows entries, 0 = padding. Padded rows never enter the
///   statistics, get y = 0 and receive no gradient, so at real rows a padded batch gives exactly
///   what the real rows give alone (the real rows are gathered into one contiguous [N, d] block
///   and run through the same block code).
/// Throws ShapeError when x has < 2 dims, weight/bias/running stats are not [d], row_valid has the
/// wrong length, or in training when fewer than 2 real rows remain (0 rows: the mask marks
/// everything as padding; 1 row: the unbiased variance is undefined, as PyTorch also refuses).
/// Runs on core/runtime/ops/batch_norm_block (the real rows as one [N, d] block): the statistics and the
/// gradients' sums in float64 over fixed chunks of rows added in order, so the outputs, the
/// statistics and every gradient have the same bits on any thread count (oneDNN's
/// batch_normalization primitive, used before, split its f32 sums across the threads).
/// ranks (SyncBatchNorm, as the official LRA code trains): with more than one rank, training
///   statistics are those of the real rows of every rank (their sums combined, in float64), the
///   running statistics take the ranks' total row count, a rank may hold 0 or 1 of the rows (2 in
///   all are needed), and the backward combines Σ dy and Σ dy·x̂ across ranks; dweight and dbias
///   stay this rank's part (the gradient sum across ranks adds them up). Every rank must call it
///   in the same order. Null or one rank: this process's rows alone.
Var batch_norm(Tape& tape, const Var& x, const Var& weight, const Var& bias,
               BatchNormState& state, bool training, const std::vector<uint8_t>* row_valid,
               Communicator* ranks = nullptr);

/// Reference forward (float64 accumulation, unthreaded; tests only): the y batch_norm returns, without
/// touching the state. When training and batch_mean/batch_var are non-null they receive the batch
/// mean and biased variance [d]. Same shapes and errors as batch_norm.
Tensor batch_norm_forward_naive(const Tensor& x, const Tensor* weight, const Tensor* bias,
                                const BatchNormState& state, bool training,
                                const std::vector<uint8_t>* row_valid, Tensor* batch_mean = nullptr,
                                Tensor* batch_var = nullptr);

/// Reference backward (float64, unthreaded; tests only) for upstream gradient dy (x's shape):
/// dx (x's shape, zero at padded rows), dweight and dbias ([d]; dweight is filled even when weight
/// is null, as if weight were 1). In training the statistics are recomputed from x.
struct BatchNormGrads {
  Tensor dx, dweight, dbias;
};
BatchNormGrads batch_norm_backward_naive(const Tensor& x, const Tensor& dy, const Tensor* weight,
                                         const BatchNormState& state, bool training,
                                         const std::vector<uint8_t>* row_valid);

}  // namespace tn
