#pragma once
// Analytic model FLOPs (`transnormer bench`, docs/performance.md "Model FLOPs"): the matmul-class
// work a model needs for one step, counted from its shapes, not measured. One multiply-add is
// 2 FLOPs. Only matrix products count (projections, attention products, channel mixer, output head);
// norms, activations, softmax exponentials, URPE rotations, dropout and the optimizer do not (the
// usual "model FLOPs" convention of MFU, PaLM appendix B), so MFU is comparable across runtimes.
//
// Forward, per sequence of T tokens (N = B·T tokens in the batch, d = d_model, H heads, D = d/H):
//   q/k/v/out projections      4 · 2·N·d²  (cosFormer without out_proj: 3)
//   Performer feature maps     2 · 2·N·H·m·D   (q and k onto m random features)
//   softmax core               B·H · 4·P·D,  P = T(T+1)/2 causal, T² bidirectional (QKᵀ and PV)
//   diag core                  the same with P summed over blocks of W: w(w+1)/2 or w² per block
//                              (w = W, or the length of the last, partial block)
//   linear-family core         B·H · 4·T·K·(D + den)   (KᵀV state and Q·state; causal or not:
//   (linear, norm_attention,   the recurrent form's count, not the chunked kernel's extra work;
//    performer, cosformer)     den = 1 when the mixer divides by Σ q·k (linear, performer,
//                              cosFormer), 0 for NormAttention; K = D, Performer m, cosFormer 2D)
//   GLU channel mixer          3 · 2·N·d·d_ff    FFN: 2 · 2·N·d·d_ff
//   LM head                    2·N·d·V           MLM head: (2·N·d² + 2·N·d·V) · 0.15, on the
//                                                masked positions only (experiments/tasks/masked_lm.h)
// Training step = 3 × forward (the backward computes two products per forward product: the input
// gradient and the weight gradient, or both operand gradients of an attention product).
#include <cstdint>

#include "layers/config/model_config.h"

namespace tn {

/// Forward FLOPs of one step, by part. Sums are over all layers.
struct ModelFlops {
  double input = 0;          // the input's (Linear(1 -> d) for pixels; 0 for a token lookup)
  double projections = 0;    // q/k/v/out and Performer feature maps
  double attention = 0;      // the token mixers' cores
  double channel_mixer = 0;
  double head = 0;           // output head (LM: h Eᵀ)
  double forward() const { return input + projections + attention + channel_mixer + head; }
  /// Forward + backward (3 × forward); AdamW adds no matmul FLOPs.
  double train_step() const { return 3.0 * forward(); }
};

/// Forward FLOPs of the core of one `kind` token mixer over `batch` sequences of `seq_len`
/// (the products between q, k and v; no projections).
double mixer_core_flops(const ModelConfig& config, MixerKind kind, int64_t batch, int64_t seq_len,
                        bool causal);

/// Forward FLOPs of the projections of one `kind` token mixer (q/k/v/out, feature maps).
double mixer_projection_flops(const ModelConfig& config, MixerKind kind, int64_t batch, int64_t seq_len);

/// Forward FLOPs of the whole model of `config` (its layers, channel mixer, head) on a batch of
/// `batch` × `seq_len` tokens; causal as config.causal().
ModelFlops model_flops(const ModelConfig& config, int64_t batch, int64_t seq_len);

}  // namespace tn
