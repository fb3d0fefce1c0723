#pragma once
#include <cstdint>
#include <vector>

#include "core/runtime/autograd/tape.h"
#include "core/runtime/ignore_index.h"

namespace tn {


struct LmLoss {
  Var loss;             // scalar: mean NLL (nats) over targets != kIgnoreIndex
  double sum_nll = 0;   // Σ NLL over those targets (double), for evaluation averages
  int64_t n_targets = 0;
};

/// Fused LM head + cross-entropy, computed in chunks of `chunk_rows` rows so the [rows, vocab]
/// logits never exist whole: logits_c = hidden_c · weightᵀ (oneDNN matmul), then one fused pass
/// per row (softmax_xent_rows: log-sum-exp, NLL, and when recording the gradient
/// (softmax − onehot) / n, in bf16 when tape.bf16()). The gradient is formed per chunk right away and turned
/// into d hidden and d weight (for an upstream gradient of 1), so the backward only hands them
/// over (the first contribution to a gradient takes the buffer) or scales and adds them.
/// hidden: [..., d] (rows = numel / d); weight: [vocab, d] (tied embedding or lm_head); targets: rows ids or
/// kIgnoreIndex. Throws ShapeError for a target outside [0, vocab).
/// bias: [vocab] added to every row of logits (the RoBERTa MLM head's output bias), or null.
LmLoss lm_head_cross_entropy(Tape& tape, const Var& hidden, const Var& weight,
                             const std::vector<int32_t>& targets, int64_t chunk_rows = 512,
                             const Var& bias = nullptr);

/// Logits of selected rows: out[i] = hidden[rows[i]] · weightᵀ, shape [rows.size(), vocab].
Tensor lm_logits(const Tensor& hidden, const Tensor& weight, const std::vector<int64_t>& rows,
                 const Tensor* bias = nullptr);

}  // namespace tn
