#include "layers/models/heads.h"

#include <numeric>

#include "core/error.h"
#include "core/runtime/ops/concat.h"
#include "core/runtime/ops/elementwise.h"
#include "core/runtime/ops/eltwise.h"
#include "core/runtime/ops/gather_rows.h"
#include "core/runtime/ops/layer_norm.h"

namespace tn {

MlmHead::MlmHead(int64_t d_model, int64_t vocab_size, ParamStore& store, Rng& rng)
    : dense_(make_linear(d_model, d_model, store, "head.dense", rng)) {
  ln_weight_ = store.add_parameter("head.layer_norm.weight", {d_model});
  ln_weight_->value.fill(1.0f);
  ln_bias_ = store.add_parameter("head.layer_norm.bias", {d_model});
  bias_ = store.add_parameter("head.bias", {vocab_size});
}

Var MlmHead::transform(ForwardContext& ctx, const Var& hidden) const {
  Var h = eltwise(ctx.tape, dense_.forward(ctx, hidden), Eltwise::Gelu);
  return layer_norm(ctx.tape, h, ln_weight_, ln_bias_);
}

ClassificationHead::ClassificationHead(int64_t d_model, int64_t num_classes, Pooling pooling, Classifier classifier,
                                       double dropout, ParamStore& store, Rng& rng)
    : pooling_(pooling), dropout_(static_cast<float>(dropout)) {
  if (classifier == Classifier::DenseTanh) dense_ = make_linear(d_model, d_model, store, "head.dense", rng);
  out_proj_ = make_linear(d_model, num_classes, store, "head.out_proj", rng);
}

Var ClassificationHead::forward(ForwardContext& ctx, const Var& hidden) const {
  const PoolKind kind = pooling_ == Pooling::Mean ? PoolKind::Mean
                        : pooling_ == Pooling::Cls ? PoolKind::First
                                                   : PoolKind::Last;
  Var x = sequence_pool(ctx.tape, hidden, kind, ctx.key_valid);
  if (!dense_) return out_proj_.forward(ctx, x);  // linear: the pooled state straight to the classes
  x = dropout(ctx.tape, x, dropout_, ctx.training, ctx.rng);
  x = eltwise(ctx.tape, dense_->forward(ctx, x), Eltwise::Tanh);
  x = dropout(ctx.tape, x, dropout_, ctx.training, ctx.rng);
  return out_proj_.forward(ctx, x);
}

RetrievalHead::RetrievalHead(int64_t d_model, int64_t num_classes, ParamStore& store, Rng& rng)
    : dense_(make_linear(4 * d_model, d_model, store, "head.dense", rng)),
      out_proj_(make_linear(d_model, num_classes, store, "head.out_proj", rng)) {}

Var RetrievalHead::forward(ForwardContext& ctx, const Var& hidden, const std::vector<uint8_t>* valid) const {
  const int64_t rows = hidden->value.shape()[0];
  if (rows % 2 != 0) throw ShapeError("[RetrievalHead] " + std::to_string(rows) + " rows: expected two documents per pair");
  Var pooled = sequence_pool(ctx.tape, hidden, PoolKind::Mean, valid);  // [2B, d]
  std::vector<int64_t> first(rows / 2), second(rows / 2);
  std::iota(first.begin(), first.end(), int64_t{0});
  std::iota(second.begin(), second.end(), rows / 2);
  Var a = gather_rows(ctx.tape, pooled, first);
  Var b = gather_rows(ctx.tape, pooled, second);
  Var features = concat_last(ctx.tape, {a, b, add(ctx.tape, a, scale(ctx.tape, b, -1.0f)), mul(ctx.tape, a, b)});
  return out_proj_.forward(ctx, eltwise(ctx.tape, dense_.forward(ctx, features), Eltwise::Gelu));
}

}  // namespace tn
