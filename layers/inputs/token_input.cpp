// model.input.kind: tokens, the learned embedding "embed_tokens.weight" [vocab_size, d_model],
// initialised N(0, 1/d_model) (fairseq's Embedding).
#include <cmath>

#include "core/runtime/ops/embedding.h"
#include "layers/module/init.h"
#include "layers/inputs/input_table.h"

namespace tn {
namespace {

class TokenInput final : public InputModule {
 public:
  TokenInput(const ModelConfig& c, ParamStore& store, Rng& rng) {
    table_ = store.add_parameter("embed_tokens.weight", {c.vocab_size, c.d_model});
    normal_init(table_->value, 1.0 / std::sqrt(static_cast<double>(c.d_model)), rng);
  }
  Var forward(ForwardContext& ctx, const std::vector<int32_t>& ids, int64_t batch, int64_t seq_len,
              float scale) override {
    return embedding(ctx.tape, table_, ids, batch, seq_len, scale);
  }
  Var tied_weight() const override { return table_; }

 private:
  Var table_;
};

}  // namespace

InputEntry token_input_entry() {
  return InputEntry{
      InputKind::Tokens, "tokens", "a learned embedding of token ids (language models, GLUE, ListOps, Text)",
      [](const ModelConfig& c, ParamStore& store, Rng& rng) -> std::unique_ptr<InputModule> {
        return std::make_unique<TokenInput>(c, store, rng);
      },
      [](const ModelConfig& c) { return static_cast<double>(c.vocab_size) * static_cast<double>(c.d_model); },
      [](const ModelConfig&, double) { return 0.0; }, true};
}

}  // namespace tn
