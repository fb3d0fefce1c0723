#pragma once
// The row kernel of the fused LM-head loss: log-softmax cross-entropy of a chunk of logits and its
// gradient (softmax − onehot) in one pass per row, while the row (200 KB at a 50k vocabulary) is
// still in cache, instead of three sweeps of the whole chunk through memory.
#include <cstdint>

namespace tn {

struct XentRows {
  double sum_nll = 0.0;   // Σ over non-ignored rows of lse(row) − row[target] (nats)
  int64_t n_targets = 0;  // rows whose target is not kIgnoreIndex
};

/// logits: [rows, cols] f32; targets: rows ids in [0, cols) or kIgnoreIndex (not checked here).
/// With grad_f32 set (it may equal logits: in place), writes g = grad_scale·(softmax(row) −
/// onehot(target)) there (a mean loss passes 1/n_targets); with grad_bf16 set, writes g rounded to bf16 (nearest even) there; both may be set.
/// An ignored row's gradient is all zeros. The function never writes logits through its own
/// pointer: only grad_f32, which may be logits itself (then they become the gradient); the
/// exponentials of a bf16-only gradient go to a per-thread row. exp is the
/// vectorised Cephes polynomial (core/runtime/math/fast_exp.h, ~2 ulp). Rows run in parallel (OpenMP); sum_nll adds the rows in order: the same bits on any thread count.
XentRows softmax_xent_rows(const float* logits, int64_t rows, int64_t cols, const int32_t* targets,
                           float* grad_f32, uint16_t* grad_bf16, float grad_scale = 1.0f);

/// The same in double precision with libm's exp, one row at a time: the trusted reference.
XentRows softmax_xent_rows_naive(const float* logits, int64_t rows, int64_t cols,
                                 const int32_t* targets, float* grad_f32);

}  // namespace tn
