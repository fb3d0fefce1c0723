#pragma once
// Output heads (docs/model.md §10; RoBERTa's heads, as in the official code):
//   mlm:            logits = LayerNorm(GELU(dense h)) Eᵀ + bias   (RoBERTa LM head; E tied or lm_head)
//   classification: pool (mean | cls = position 0 | last) → dropout → dense → tanh → dropout → out_proj
//                   (classifier dense_tanh), or pool → out_proj (classifier linear: the official LRA decoder)
// The lm head (logits = h Eᵀ) needs no parameters of its own and lives in the model.
#include <optional>

#include "core/runtime/ops/sequence_pool.h"
#include "layers/attention/projections.h"
#include "layers/config/model_config.h"

namespace tn {

class MlmHead {
 public:
  /// Parameters head.dense.{weight,bias} [d,d], head.layer_norm.{weight,bias} [d], head.bias [vocab].
  MlmHead(int64_t d_model, int64_t vocab_size, ParamStore& store, Rng& rng);
  /// LayerNorm(GELU(dense h)): [..., d] → [..., d]; the caller multiplies by Eᵀ and adds bias().
  Var transform(ForwardContext& ctx, const Var& hidden) const;
  const Var& bias() const { return bias_; }

 private:
  Projection dense_;
  Var ln_weight_, ln_bias_, bias_;
};

class ClassificationHead {
 public:
  /// Parameters head.dense.{weight,bias} [d,d] (dense_tanh only), head.out_proj.{weight,bias}
  /// [classes,d].
  ClassificationHead(int64_t d_model, int64_t num_classes, Pooling pooling, Classifier classifier, double dropout,
                     ParamStore& store, Rng& rng);
  /// hidden [B, T, d] → logits [B, num_classes]; pooling skips padded positions (ctx.key_valid).
  Var forward(ForwardContext& ctx, const Var& hidden) const;

 private:
  Pooling pooling_;
  float dropout_;
  std::optional<Projection> dense_;  // dense_tanh only
  Projection out_proj_;
};

/// The dual-encoder head of LRA retrieval (docs/model.md §10; OpenNLPLab/lra's RetrievalHead with
/// nli: true): a, b = mean-pooled encodings of the two documents; logits =
/// out_proj(GELU(dense([a, b, a−b, a⊙b]))). Parameters head.dense [d, 4d], head.out_proj
/// [classes, d] (with biases).
class RetrievalHead {
 public:
  RetrievalHead(int64_t d_model, int64_t num_classes, ParamStore& store, Rng& rng);
  /// hidden [2B, T, d]: rows 0..B-1 the first documents, rows B..2B-1 the second ones (both
  /// through one forward, as the official code concatenates them), with its padding mask (2B·T
  /// flags, null: none) → logits [B, num_classes]. Throws ShapeError for an odd row count.
  Var forward(ForwardContext& ctx, const Var& hidden, const std::vector<uint8_t>* valid) const;

 private:
  Projection dense_, out_proj_;
};

}  // namespace tn
