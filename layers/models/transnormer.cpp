#include "layers/models/transnormer.h"

#include <cmath>

#include "core/error.h"
#include "core/ops/elementwise.h"
#include "core/ops/embedding.h"
#include "layers/init.h"
#include "layers/positional/sinusoidal.h"
#include "layers/registry.h"

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
  embed_tokens_ = store_.add_parameter("embed_tokens.weight", {c.vocab_size, d});
  normal_init(embed_tokens_->value, 1.0 / std::sqrt(static_cast<double>(d)), rng);
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
    classification_head_ = std::make_unique<ClassificationHead>(d, c.num_classes, c.pooling,
                                                                c.pooler_dropout, store_, rng);
  if (c.head == HeadKind::Retrieval)
    retrieval_head_ = std::make_unique<RetrievalHead>(d, c.num_classes, store_, rng);
}

TransNormerModel::~TransNormerModel() = default;

const Var& TransNormerModel::output_weight() const {
  return config_.tie_embeddings ? embed_tokens_ : lm_head_;
}

Var TransNormerModel::forward(ForwardContext& ctx, const std::vector<int32_t>& tokens,
                              int64_t batch, int64_t seq_len, std::vector<double>* hidden_norms) {
  const ModelConfig& c = config_;
  const float embed_scale = c.embed_scale ? std::sqrt(static_cast<float>(c.d_model)) : 1.0f;
  Var x = embedding(ctx.tape, embed_tokens_, tokens, batch, seq_len, embed_scale);
  if (c.positional == Positional::Sinusoidal) {
    if (!sinusoidal_ || sinusoidal_->value.dim(0) < seq_len)
      sinusoidal_ = make_var(sinusoidal_table(seq_len, c.d_model), false);
    x = add_positions(ctx.tape, x, sinusoidal_);
  } else if (c.positional == Positional::Learned) {
    if (seq_len > c.max_positions)
      throw ConfigError("sequence length " + std::to_string(seq_len) +
                        " exceeds model.max_positions=" + std::to_string(c.max_positions) +
                        "; raise max_positions or lower data.seq_len");
    x = add_positions(ctx.tape, x, embed_positions_);
  }
  x = embed_norm_->forward(ctx, x);
  x = dropout(ctx.tape, x, static_cast<float>(c.dropout), ctx.training, ctx.rng);
  if (hidden_norms) hidden_norms->push_back(frobenius(x->value));
  const float p = static_cast<float>(c.dropout);
  for (auto& block : blocks_) {
    if (c.prenorm) {
      Var h = block->token_mixer->forward(ctx, block->token_mixer_norm->forward(ctx, x));
      x = add(ctx.tape, x, dropout(ctx.tape, h, p, ctx.training, ctx.rng));
      h = block->channel_mixer->forward(ctx, block->channel_mixer_norm->forward(ctx, x));
      x = add(ctx.tape, x, dropout(ctx.tape, h, p, ctx.training, ctx.rng));
    } else {
      Var h = block->token_mixer->forward(ctx, x);
      x = block->token_mixer_norm->forward(ctx, add(ctx.tape, x, dropout(ctx.tape, h, p, ctx.training, ctx.rng)));
      h = block->channel_mixer->forward(ctx, x);
      x = block->channel_mixer_norm->forward(ctx, add(ctx.tape, x, dropout(ctx.tape, h, p, ctx.training, ctx.rng)));
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

Tensor TransNormerModel::token_logits(ForwardContext& ctx, const Var& hidden,
                                      const std::vector<int64_t>& rows) {
  if (classification_head_ || retrieval_head_)
    throw ConfigError("model.head is not a token head: it has no token logits");
  Var h = mlm_head_ ? mlm_head_->transform(ctx, hidden) : hidden;
  const Tensor flat = h->value.reshape({-1, config_.d_model});
  return lm_logits(flat, output_weight()->value, rows, mlm_head_ ? &mlm_head_->bias()->value : nullptr);
}

Var TransNormerModel::classify(ForwardContext& ctx, const Var& hidden) {
  if (!classification_head_)
    throw ConfigError("model.head is not classification: set head: classification");
  return classification_head_->forward(ctx, hidden);
}

Var TransNormerModel::retrieve(ForwardContext& ctx, const Var& hidden_a,
                               const std::vector<uint8_t>* valid_a, const Var& hidden_b,
                               const std::vector<uint8_t>* valid_b) {
  if (!retrieval_head_) throw ConfigError("model.head is not retrieval: set head: retrieval");
  return retrieval_head_->forward(ctx, hidden_a, valid_a, hidden_b, valid_b);
}

}  // namespace tn
