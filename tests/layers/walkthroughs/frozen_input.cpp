// The input walkthrough's example (docs/architecture.md, "Walkthroughs"): `frozen_tokens`, token
// ids through a random embedding that training never changes, "embed_tokens_frozen" [vocab_size,
// d_model] drawn N(0, 1/d_model) as the learned one is, kept as a buffer (it goes into
// checkpoints, but has no gradient and no optimizer state): the control for what a learned
// embedding adds. Its module and entry here, add_input in place of its line in input_table.cpp.
#include <cmath>

#include "core/runtime/ops/embedding.h"
#include "layers/inputs/input_table.h"
#include "layers/module/init.h"

namespace tn::walkthrough {
namespace {

/// The fixed table, drawn as the learned embedding's initialisation is.
Var frozen_table(const ModelConfig& c, ParamStore& store, Rng& rng) {
  Var table = store.add_buffer("embed_tokens_frozen", {c.vocab_size, c.d_model});
  normal_init(table->value, 1.0 / std::sqrt(static_cast<double>(c.d_model)), rng);
  return table;
}

/// Ids through the fixed table; no tied head can share it (it is not trained).
class FrozenTokenInput final : public InputModule {
 public:
  FrozenTokenInput(const ModelConfig& c, ParamStore& store, Rng& rng) : table_(frozen_table(c, store, rng)) {}
  Var forward(ForwardContext& ctx, const std::vector<int32_t>& ids, int64_t batch, int64_t seq_len,
              float scale) override { return embedding(ctx.tape, table_, ids, batch, seq_len, scale); }
  Var tied_weight() const override { return nullptr; }

 private:
  Var table_;
};

InputEntry frozen_input_entry() {
  return InputEntry{
      InputKind::Tokens,  // replaced by add_input
      "frozen_tokens", "a fixed random embedding of token ids (the walkthrough's example)",
      [](const ModelConfig& c, ParamStore& store, Rng& rng) -> std::unique_ptr<InputModule> {
        return std::make_unique<FrozenTokenInput>(c, store, rng);
      },
      [](const ModelConfig&) { return 0.0; },  // a buffer, no parameters
      [](const ModelConfig&, double) { return 0.0; }, false, false};
}

}  // namespace

/// The kind add_input gave the example (tests name it through the table, by "frozen_tokens").
const InputKind kFrozenTokens = add_input(frozen_input_entry());

}  // namespace tn::walkthrough
