#include "layers/models/transnormer.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/runtime/ops/elementwise.h"
#include "core/runtime/ops/embedding.h"
#include "core/runtime/ops/gather_rows.h"
#include "core/runtime/ops/lm_head_loss.h"
#include "layers/attention/mixer_table.h"
#include "layers/attention/score_tap.h"
#include "layers/module/init.h"
#include "layers/inputs/input_table.h"
#include "layers/positional/sinusoidal.h"
#include "layers/module/registry.h"

namespace tn {

struct TransNormerModel::Block {
  std::unique_ptr<Norm> token_mixer_norm, channel_mixer_norm;
  std::unique_ptr<TokenMixer> token_mixer;
  std::unique_ptr<ChannelMixer> channel_mixer;
};

namespace {
double frobenius(const Tensor& t) {
  double acc = 0.0;
  const float* p = t.data();
  for (int64_t i = 0; i < t.numel(); ++i) acc += static_cast<double>(p[i]) * p[i];
  return std::sqrt(acc);
}
}  // namespace

TransNormerModel::TransNormerModel(ModelConfig config, uint64_t seed) : config_(std::move(config)) {
  const ModelConfig& c = config_;
  Rng rng(seed);
  const int64_t d = c.d_model;
  input_ = input_entry(c.input.kind).make(c, store_, rng);
  if (c.positional == Positional::Learned) {
    embed_positions_ = store_.add_parameter("embed_positions.weight", {c.max_positions, d});
    normal_init(embed_positions_->value, 1.0 / std::sqrt(static_cast<double>(d)), rng);
  }
  embed_norm_ = std::make_unique<Norm>(c.embed_norm, d, store_, "embed_norm");
  for (int64_t i = 0; i < c.n_layers; ++i) {
    const std::string prefix = "layers." + std::to_string(i);
    auto block = std::make_unique<Block>();
    block->token_mixer_norm = std::make_unique<Norm>(c.norm, d, store_, prefix + ".token_mixer_norm");
    block->token_mixer = make_token_mixer(c, c.layers.at(i), store_, prefix + ".token_mixer", rng);
    block->channel_mixer_norm =
        std::make_unique<Norm>(c.norm, d, store_, prefix + ".channel_mixer_norm");
    block->channel_mixer = make_channel_mixer(c, store_, prefix + ".channel_mixer", rng);
    blocks_.push_back(std::move(block));
  }
  final_norm_ =
      std::make_unique<Norm>(c.final_norm ? c.norm : NormKind::None, d, store_, "final_norm");
  if (!c.tie_embeddings) {
    lm_head_ = store_.add_parameter("lm_head.weight", {c.vocab_size, d});
    linear_default(lm_head_->value, nullptr, rng);
  }
  if (c.head == HeadKind::MLM) mlm_head_ = std::make_unique<MlmHead>(d, c.vocab_size, store_, rng);
  if (c.head == HeadKind::Classification)
    classification_head_ = std::make_unique<ClassificationHead>(d, c.num_classes, c.pooling, c.classifier,
                                                                c.pooler_dropout, store_, rng);
  if (c.head == HeadKind::Retrieval)
    retrieval_head_ = std::make_unique<RetrievalHead>(d, c.num_classes, store_, rng);
}

TransNormerModel::~TransNormerModel() = default;

Var TransNormerModel::output_weight() const {
  return config_.tie_embeddings ? input_->tied_weight() : lm_head_;
}

Var TransNormerModel::forward(ForwardContext& ctx, const std::vector<int32_t>& tokens,
                              int64_t batch, int64_t seq_len, std::vector<double>* hidden_norms) {
  const ModelConfig& c = config_;
  const float embed_scale = c.embed_scale ? std::sqrt(static_cast<float>(c.d_model)) : 1.0f;
  positions_forwarded_ += batch * seq_len;
  Var x = input_->forward(ctx, tokens, batch, seq_len, embed_scale);
  if (c.positional == Positional::Sinusoidal || c.positional == Positional::SinusoidalInterleaved) {
    if (!sinusoidal_ || sinusoidal_->value.dim(0) < seq_len)
      sinusoidal_ = make_var(fixed_position_table(c.positional, seq_len, c.d_model), false);
    x = add_positions(ctx.tape, x, sinusoidal_);
  } else if (c.positional == Positional::Learned) {
    if (seq_len > c.max_positions)
      throw ConfigError("sequence length " + std::to_string(seq_len) +
                        " exceeds model.max_positions=" + std::to_string(c.max_positions) +
                        "; raise max_positions or lower the sequence length (data.seq_len; bench: --seq-len)");
    x = add_positions(ctx.tape, x, embed_positions_);
  }
  x = embed_norm_->forward(ctx, x);
  x = dropout(ctx.tape, x, static_cast<float>(c.embedding_dropout()), ctx.training, ctx.rng);
  if (hidden_norms) hidden_norms->push_back(frobenius(x->value));
  const float p = static_cast<float>(c.dropout);
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const auto& block = blocks_[i];
    if (ctx.score_probe) ctx.score_probe->begin_layer(static_cast<int64_t>(i));
    if (c.prenorm) {
      Var h = block->token_mixer->forward(ctx, block->token_mixer_norm->forward(ctx, x));
      x = add_dropout(ctx.tape, x, h, p, ctx.training, ctx.rng);
      h = block->channel_mixer->forward(ctx, block->channel_mixer_norm->forward(ctx, x));
      x = add_dropout(ctx.tape, x, h, p, ctx.training, ctx.rng);
    } else {
      Var h = block->token_mixer->forward(ctx, x);
      x = block->token_mixer_norm->forward(ctx, add_dropout(ctx.tape, x, h, p, ctx.training, ctx.rng));
      h = block->channel_mixer->forward(ctx, x);
      x = block->channel_mixer_norm->forward(ctx, add_dropout(ctx.tape, x, h, p, ctx.training, ctx.rng));
    }
    if (hidden_norms) hidden_norms->push_back(frobenius(x->value));
  }
  x = final_norm_->forward(ctx, x);
  if (hidden_norms) hidden_norms->push_back(frobenius(x->value));
  return x;
}

LmLoss TransNormerModel::lm_loss(ForwardContext& ctx, const Var& hidden,
                                 const std::vector<int32_t>& targets) {
  if (classification_head_ || retrieval_head_)
    throw ConfigError("model.head is not a token head: token losses need head lm or mlm");
  if (mlm_head_)
    return lm_head_cross_entropy(ctx.tape, mlm_head_->transform(ctx, hidden), output_weight(),
                                 targets, 512, mlm_head_->bias());
  return lm_head_cross_entropy(ctx.tape, hidden, output_weight(), targets);
}

LmLoss TransNormerModel::token_loss_at(ForwardContext& ctx, const Var& hidden, const std::vector<int64_t>& rows,
                                       const std::vector<int32_t>& targets) {
  if (rows.size() != targets.size())
    throw ShapeError("[token_loss_at] " + std::to_string(targets.size()) + " targets for " +
                     std::to_string(rows.size()) + " rows");
  return lm_loss(ctx, gather_rows(ctx.tape, hidden, rows), targets);
}

Tensor TransNormerModel::token_logits(ForwardContext& ctx, const Var& hidden,
                                      const std::vector<int64_t>& rows) {
  if (classification_head_ || retrieval_head_)
    throw ConfigError("model.head is not a token head: it has no token logits");
  Var h = mlm_head_ ? mlm_head_->transform(ctx, hidden) : hidden;
  const Tensor flat = h->value.reshape({-1, config_.d_model});
  return lm_logits(flat, output_weight()->value, rows, mlm_head_ ? &mlm_head_->bias()->value : nullptr);
}

int64_t ModelDecodeState::size_bytes() const {
  int64_t total = static_cast<int64_t>(prefix.capacity() * sizeof(int32_t));
  for (const auto& layer : layers) total += layer->size_bytes();
  return total;
}

std::vector<std::string> TransNormerModel::prefix_recomputing_mixers() const {
  std::vector<std::string> names;
  for (MixerKind kind : config_.layers) {
    const std::string name = to_string(kind);
    if (mixer_entry(kind).decode == DecodeForm::RecomputePrefix &&
        std::find(names.begin(), names.end(), name) == names.end())
      names.push_back(name);
  }
  return names;
}

bool TransNormerModel::decodes_incrementally() const { return prefix_recomputing_mixers().empty(); }

ModelDecodeState TransNormerModel::start_decode() const {
  if (!config_.causal())
    throw ConfigError("model.arch is encoder: only a decoder (arch: decoder) generates text token "
                      "by token");
  if (config_.head != HeadKind::LM)
    throw ConfigError("model.head is not lm: generation needs the language-model head (head: lm)");
  ModelDecodeState state;
  if (!decodes_incrementally()) {
    state.recompute_prefix = true;
    return state;
  }
  for (const auto& block : blocks_) state.layers.push_back(block->token_mixer->start_decode());
  return state;
}

Tensor TransNormerModel::decode_step(ForwardContext& ctx, ModelDecodeState& state, int32_t token,
                                     int64_t position) {
  const ModelConfig& c = config_;
  if (ctx.training || ctx.tape.enabled())
    throw ShapeError("[decode_step] decoding runs in eval mode with the tape disabled "
                     "(ForwardContext.training false, tape.set_enabled(false))");
  if (position != state.next_position)
    throw ShapeError("[decode_step] positions must be fed in order from 0: expected " +
                     std::to_string(state.next_position) + ", got " + std::to_string(position));
  if (state.recompute_prefix) {  // a layer without an incremental form: the whole prefix again
    if (token < 0 || token >= c.vocab_size)  // checked before the prefix keeps it
      throw ShapeError("[decode_step] token " + std::to_string(token) + " is outside [0, " +
                       std::to_string(c.vocab_size) + ")");
    state.prefix.push_back(token);
    const int64_t n = static_cast<int64_t>(state.prefix.size());
    const Var hidden = forward(ctx, state.prefix, 1, n);
    ++state.next_position;
    return token_logits(ctx, hidden, {n - 1}).reshape({c.vocab_size});
  }
  if (state.layers.size() != blocks_.size())
    throw ShapeError("[decode_step] the state was not made by this model's start_decode()");
  const int64_t d = c.d_model;
  const float embed_scale = c.embed_scale ? std::sqrt(static_cast<float>(d)) : 1.0f;
  Var x = input_->forward(ctx, {token}, 1, 1, embed_scale);
  if (c.positional == Positional::Sinusoidal || c.positional == Positional::SinusoidalInterleaved) {
    // The row forward() adds at this position.
    x = add_positions(ctx.tape, x, make_var(fixed_position_table(c.positional, 1, d, position), false));
  } else if (c.positional == Positional::Learned) {
    if (position >= c.max_positions)
      throw ConfigError("position " + std::to_string(position) + " exceeds model.max_positions=" +
                        std::to_string(c.max_positions) +
                        " (learned positions): generate fewer tokens or use a shorter prompt");
    Tensor row = Tensor::empty({1, d});
    std::copy_n(embed_positions_->value.data() + position * d, d, row.data());
    x = add_positions(ctx.tape, x, make_var(std::move(row), false));
  }
  x = embed_norm_->forward(ctx, x);
  for (size_t i = 0; i < blocks_.size(); ++i) {
    Block& block = *blocks_[i];
    DecodeState& layer_state = *state.layers[i];
    if (c.prenorm) {
      Var h = block.token_mixer->decode_step(ctx, layer_state,
                                             block.token_mixer_norm->forward(ctx, x), position);
      x = add(ctx.tape, x, h);
      h = block.channel_mixer->forward(ctx, block.channel_mixer_norm->forward(ctx, x));
      x = add(ctx.tape, x, h);
    } else {
      Var h = block.token_mixer->decode_step(ctx, layer_state, x, position);
      x = block.token_mixer_norm->forward(ctx, add(ctx.tape, x, h));
      h = block.channel_mixer->forward(ctx, x);
      x = block.channel_mixer_norm->forward(ctx, add(ctx.tape, x, h));
    }
  }
  x = final_norm_->forward(ctx, x);
  ++state.next_position;
  return lm_logits(x->value.reshape({1, d}), output_weight()->value, {0}).reshape({c.vocab_size});
}

Var TransNormerModel::classify(ForwardContext& ctx, const Var& hidden) {
  if (!classification_head_)
    throw ConfigError("model.head is not classification: set head: classification");
  return classification_head_->forward(ctx, hidden);
}

Var TransNormerModel::retrieve(ForwardContext& ctx, const Var& hidden, const std::vector<uint8_t>* valid) {
  if (!retrieval_head_) throw ConfigError("model.head is not retrieval: set head: retrieval");
  return retrieval_head_->forward(ctx, hidden, valid);
}

}  // namespace tn
