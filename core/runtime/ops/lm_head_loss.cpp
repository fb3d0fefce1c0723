#include "core/runtime/ops/lm_head_loss.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "core/runtime/autograd/grad_accum.h"
#include "core/runtime/dnnl/matmul.h"
#include "core/error.h"
#include "core/runtime/math/vec.h"
#include "core/runtime/ops/operand.h"
#include "core/runtime/ops/softmax_xent_rows.h"

namespace tn {

namespace {

/// Throws ShapeError unless weight is [vocab, d] for hidden's width d, there is a target per row
/// (each in [0, vocab) or kIgnoreIndex), and a bias has vocab entries.
void check_lm_head_args(const Tensor& hidden, const Tensor& weight, const std::vector<int32_t>& targets,
                        const Var& bias) {
  const int64_t d = hidden.dim(-1);
  const int64_t rows = hidden.numel() / d;
  const int64_t vocab = weight.dim(0);
  if (weight.dim(1) != d)
    throw ShapeError("[lm_head_cross_entropy] hidden width " + std::to_string(d) +
                     " vs weight " + shape_str(weight.shape()));
  if (static_cast<int64_t>(targets.size()) != rows)
    throw ShapeError("[lm_head_cross_entropy] " + std::to_string(targets.size()) +
                     " targets for " + std::to_string(rows) + " rows");
  for (int64_t i = 0; i < rows; ++i)
    if (targets[i] != kIgnoreIndex && (targets[i] < 0 || targets[i] >= vocab))
      throw ShapeError("[lm_head_cross_entropy] target " + std::to_string(targets[i]) +
                       " outside the vocabulary [0, " + std::to_string(vocab) + ")");
  if (bias && bias->value.numel() != vocab)
    throw ShapeError("[lm_head_cross_entropy] bias has " + std::to_string(bias->value.numel()) +
                     " entries for a vocabulary of " + std::to_string(vocab));
}

/// Adds s × g to v's gradient (hands g's buffer over when v has none yet).
void deliver_scaled(const GradRef& v, const Tensor& g, float s) {
  if (!v.requires_grad()) return;
  if (!v.has_grad()) {  // the first contribution: hand the buffer over, no copy
    v.grad() = g;
    if (s != 1.0f) vec_mul_scale(v.grad().data(), nullptr, s, v.grad().data(), g.numel());
    return;
  }
  vec_axpy(v.grad().data(), s, g.data(), g.numel());
}

/// The operands of one chunk's gradient products (bf16 when w16 is set).
struct ChunkOperands {
  int64_t d, vocab;
  const float *hp, *wp;                 // hidden [rows, d], weight [vocab, d]
  const Bf16Buffer *w16, *h16;          // their bf16 copies, or null in f32
  float *d_hidden, *d_weight, *d_bias;  // d_bias null without a bias
};

/// Rows r0..r0+rc's contribution from their logits' gradient g (lp in f32, gb in bf16):
/// d bias += Σ_rows g; d hidden_c = g W; d W (+)= gᵀ hidden_c (the first chunk overwrites).
void chunk_gradients(const ChunkOperands& o, int64_t r0, int64_t rc, const float* lp, const uint16_t* gb) {
  const int64_t d = o.d, vocab = o.vocab;
  if (o.d_bias) {
    float* db = o.d_bias;
    for (int64_t i = 0; i < rc; ++i)
#pragma omp simd
      for (int64_t j = 0; j < vocab; ++j) db[j] += lp[i * vocab + j];
  }
  if (o.w16) {
    matmul_bf16({.m = rc, .n = d, .k = vocab, .bf16 = true}, gb, o.w16->data(), o.d_hidden + r0 * d);
    matmul_bf16({.m = vocab, .n = d, .k = rc, .trans_a = true, .accumulate = r0 > 0, .bf16 = true}, gb,
                o.h16->data() + r0 * d, o.d_weight);
  } else {
    matmul({.m = rc, .n = d, .k = vocab}, lp, o.wp, o.d_hidden + r0 * d);
    matmul({.m = vocab, .n = d, .k = rc, .trans_a = true, .accumulate = r0 > 0}, lp, o.hp + r0 * d, o.d_weight);
  }
}

}  // namespace

LmLoss lm_head_cross_entropy(Tape& tape, const Var& hidden, const Var& weight,
                             const std::vector<int32_t>& targets, int64_t chunk_rows,
                             const Var& bias) {
  const int64_t d = hidden->value.dim(-1);
  const int64_t rows = hidden->value.numel() / d;
  const int64_t vocab = weight->value.dim(0);
  check_lm_head_args(hidden->value, weight->value, targets, bias);
  const bool record = tape.needs_grad({&hidden, &weight, &bias});
  Tensor d_hidden, d_weight, d_bias;
  if (record) {
    d_hidden = Tensor::empty({rows, d});
    d_weight = Tensor::empty({vocab, d});  // the first chunk's product overwrites it
    if (bias) d_bias = Tensor::zeros({vocab});
  }
  // bf16: the weight (B of every chunk's logits and d-hidden products) and the hidden states
  // (A of the logits, B of d weight) are converted once here, not once per product.
  const bool bf16 = tape.bf16();
  std::shared_ptr<const Bf16Buffer> w16, h16;
  if (bf16) {
    w16 = weight_operand(tape, weight).bf16;
    h16 = tape.bf16_of(hidden);
  }
  const int64_t chunk = std::min(chunk_rows, rows);
  Tensor logits = Tensor::empty({chunk, vocab});
  std::unique_ptr<Bf16Buffer> g16;  // the chunk's gradient in bf16, written by the row kernel
  if (bf16 && record) g16 = std::make_unique<Bf16Buffer>(chunk * vocab);
  const float* hp = hidden->value.data();
  const float* wp = weight->value.data();
  const float* bp = bias ? bias->value.data() : nullptr;
  // The gradient of the mean is (softmax − onehot) / n_targets: scaled in the row kernel.
  const int64_t n_targets = std::count_if(targets.begin(), targets.end(),
                                          [](int32_t t) { return t != kIgnoreIndex; });
  const float grad_scale = n_targets ? 1.0f / static_cast<float>(n_targets) : 0.0f;
  double sum_nll = 0.0;
  for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
    const int64_t rc = std::min(chunk, rows - r0);
    float* lp = logits.data();
    if (bf16)
      matmul_bf16(
          {.m = rc, .n = vocab, .k = d, .trans_b = true, .bias = bias != nullptr, .bf16 = true},
          h16->data() + r0 * d, w16->data(), lp, bp);
    else
      matmul({.m = rc, .n = vocab, .k = d, .trans_b = true, .bias = bias != nullptr},
             hp + r0 * d, wp, lp, bp);
    // g = (softmax − onehot) / n, f32 in place unless only its bf16 copy is needed.
    float* g = record && (!bf16 || bias) ? lp : nullptr;
    uint16_t* gb = record && bf16 ? g16->data() : nullptr;
    sum_nll += softmax_xent_rows(lp, rc, vocab, targets.data() + r0, g, gb, grad_scale).sum_nll;
    if (!record) continue;
    chunk_gradients({d, vocab, hp, wp, w16.get(), h16.get(), d_hidden.data(), d_weight.data(),
                     bias ? d_bias.data() : nullptr},
                    r0, rc, lp, gb);
  }
  LmLoss out;
  out.sum_nll = sum_nll;
  out.n_targets = n_targets;
  const double mean = n_targets ? sum_nll / static_cast<double>(n_targets) : 0.0;
  out.loss = make_var(Tensor::full({}, static_cast<float>(mean)));
  if (!record) return out;
  out.loss->requires_grad = true;
  Var loss = out.loss;
  // The gradients were formed in the forward: the backward reads no value, only scales them.
  tape.record([dh = GradRef(hidden), dw = GradRef(weight), db = GradRef(bias), loss, d_hidden, d_weight, d_bias,
               n_targets]() {
    if (!loss->has_grad() || n_targets == 0) return;
    // The gradients were formed for an upstream gradient of 1; scale by the real one.
    const float s = loss->grad().data()[0];
    deliver_scaled(dh, d_hidden, s);
    deliver_scaled(dw, d_weight, s);
    if (db) deliver_scaled(db, d_bias, s);
  });
  return out;
}

Tensor lm_logits(const Tensor& hidden, const Tensor& weight, const std::vector<int64_t>& rows,
                 const Tensor* bias) {
  const int64_t d = hidden.dim(-1), vocab = weight.dim(0);
  Tensor picked = Tensor::empty({static_cast<int64_t>(rows.size()), d});
  for (size_t i = 0; i < rows.size(); ++i)
    std::memcpy(picked.data() + i * d, hidden.data() + rows[i] * d, sizeof(float) * d);
  Tensor out = Tensor::empty({static_cast<int64_t>(rows.size()), vocab});
  matmul({.m = static_cast<int64_t>(rows.size()), .n = vocab, .k = d, .trans_b = true,
          .bias = bias != nullptr},
         picked.data(), weight.data(), out.data(), bias ? bias->data() : nullptr);
  return out;
}

}  // namespace tn
