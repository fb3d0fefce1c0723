#pragma once
// The model builder (docs/model.md §1–2): the input (model.input: a token embedding, or Linear(1→d)
// over pixel levels; × √d_model when embed_scale) + absolute positions → embed_norm → dropout → n_layers blocks → final_norm → head.
// Block (docs/model.md §2): pre-norm  x = x + drop(mixer(norm1(x))); x = x + drop(cm(norm2(x)));
//                        post-norm x = norm1(x + drop(mixer(x))); x = norm2(x + drop(cm(x))).
// Parameter names are the checkpoint names of docs/model.md §12.
// Incremental decoding (start_decode / decode_step): the same computation one token at a time for
// a decoder LM, each mixer carrying its DecodeState (layers/module/module.h).
#include <memory>
#include <string>
#include <vector>

#include "core/runtime/ops/lm_head_loss.h"
#include "layers/inputs/input_table.h"
#include "layers/config/model_config.h"
#include "layers/models/heads.h"
#include "layers/module/module.h"
#include "layers/norms/norm.h"
#include "layers/module/param_store.h"

namespace tn {

/// The decoding state of a whole decoder LM for one sequence (batch 1): one DecodeState per layer
/// and the position of the next token; or, for a model with a layer that has no incremental form
/// (DecodeForm::RecomputePrefix in the mixer table: cosFormer), the token prefix, recomputed whole
/// at each step. Made by TransNormerModel::start_decode().
struct ModelDecodeState {
  std::vector<std::unique_ptr<DecodeState>> layers;  // empty when recomputing the prefix
  std::vector<int32_t> prefix;                       // the tokens so far, when recomputing
  bool recompute_prefix = false;
  int64_t next_position = 0;
  /// Bytes held (constant in the position for a stack of NormAttention, linear, Performer and
  /// DiagAttention layers).
  int64_t size_bytes() const;
};

class TransNormerModel {
 public:
  /// Builds and initialises every parameter from `seed` (docs/model.md §13).
  /// Throws ConfigError for options this build cannot run.
  TransNormerModel(ModelConfig config, uint64_t seed);
  ~TransNormerModel();
  TransNormerModel(const TransNormerModel&) = delete;
  TransNormerModel& operator=(const TransNormerModel&) = delete;

  const ModelConfig& config() const { return config_; }
  ParamStore& params() { return store_; }
  const ParamStore& params() const { return store_; }

  /// Hidden states after final_norm, [batch, seq_len, d_model]. tokens: batch·seq_len ids.
  /// hidden_norms (optional) receives the Frobenius norms of the embedding output, of each layer's
  /// output and of the final output (golden expected.json "hidden_norms").
  Var forward(ForwardContext& ctx, const std::vector<int32_t>& tokens, int64_t batch,
              int64_t seq_len, std::vector<double>* hidden_norms = nullptr);

  /// Token heads (lm, mlm): mean cross-entropy (nats) over targets != -100 of the logits at every
  /// position (lm: h Eᵀ; mlm: LayerNorm(GELU(dense h)) Eᵀ + bias); hidden as returned by forward.
  /// Throws ConfigError for a classification model.
  LmLoss lm_loss(ForwardContext& ctx, const Var& hidden, const std::vector<int32_t>& targets);

  /// Token-head loss at selected positions only: the rows (flattened [B·T] indices of hidden) are
  /// gathered before the head, so the head and its vocabulary product run on them alone
  /// (fairseq's masked_tokens: the masked-LM loss). targets: one id per row.
  LmLoss token_loss_at(ForwardContext& ctx, const Var& hidden, const std::vector<int64_t>& rows,
                       const std::vector<int32_t>& targets);
  /// Token-head logits of the given rows of hidden (flattened [B·T, d] row indices): [rows, vocab].
  Tensor token_logits(ForwardContext& ctx, const Var& hidden, const std::vector<int64_t>& rows);

  /// Classification head: hidden [B, T, d] → logits [B, num_classes] (pooling skips padding).
  Var classify(ForwardContext& ctx, const Var& hidden);

  /// Retrieval (dual encoder) head: hidden [2B, T, d] from one forward() over both documents of
  /// B pairs (first documents in rows 0..B-1, second ones in rows B..2B-1) with their padding mask
  /// (null: none) → logits [B, num_classes].
  Var retrieve(ForwardContext& ctx, const Var& hidden, const std::vector<uint8_t>* valid);

  /// The output matrix [vocab, d]: embed_tokens.weight when tied, else lm_head.weight.
  Var output_weight() const;

  /// Whether every layer has an incremental form (its mixer-table entry's decode form is not
  /// DecodeForm::RecomputePrefix: all but cosFormer). If not, decode_step recomputes the whole
  /// prefix: correct, but O(t) per token.
  bool decodes_incrementally() const;

  /// The names of this model's mixers without an incremental form (DecodeForm::RecomputePrefix),
  /// each once, in layer order; empty when decodes_incrementally().
  std::vector<std::string> prefix_recomputing_mixers() const;

  /// Starts decoding one sequence: an empty state per layer (or an empty prefix, see
  /// decodes_incrementally). Throws ConfigError unless the model is a decoder (arch: decoder)
  /// with the lm head.
  ModelDecodeState start_decode() const;

  /// Feeds `token` at `position` (= state.next_position: tokens go in order from 0) and returns
  /// the logits [vocab_size] for the next token: embedding (× √d_model when embed_scale) + the
  /// position's row (sinusoidal p = position + 2, or learned row `position`), embed_norm, each
  /// block on one row (the mixer through its DecodeState), final_norm, h Eᵀ. Equal to the logits
  /// of forward() + token_logits() at that position (to float tolerance). With a cosFormer layer it
  /// runs forward() over the whole prefix instead: the same logits as forward() on the tokens so
  /// far (cosFormer's M = position + 1). Per-token time does not grow with the position for
  /// linear, NormAttention, Performer and DiagAttention layers. Eval mode with the tape disabled:
  /// throws ShapeError otherwise, and for a position out of order or a token outside [0, vocab);
  /// ConfigError past max_positions with learned positions.
  Tensor decode_step(ForwardContext& ctx, ModelDecodeState& state, int32_t token, int64_t position);

  /// Positions (batch × seq_len, padding included) run through forward() since the model was
  /// built: what an evaluation's throughput counts, as bench's inference tokens/s does.
  int64_t positions_forwarded() const { return positions_forwarded_; }

 private:
  struct Block;
  ModelConfig config_;
  ParamStore store_;
  std::unique_ptr<InputModule> input_;  // model.input (layers/inputs/input_table.h)
  Var embed_positions_, lm_head_;
  Var sinusoidal_;  // cached table, grown on demand, not a checkpoint entry
  std::unique_ptr<Norm> embed_norm_, final_norm_;
  std::unique_ptr<MlmHead> mlm_head_;
  std::unique_ptr<ClassificationHead> classification_head_;
  std::unique_ptr<RetrievalHead> retrieval_head_;
  std::vector<std::unique_ptr<Block>> blocks_;
  int64_t positions_forwarded_ = 0;
};

}  // namespace tn
