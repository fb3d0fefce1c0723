// model.input.kind: linear, the LRA image encoder (Tay et al. 2021, its image tasks; the official
// TransNormer LRA configs' `encoder: linear`): each position's value v = (level − mean) / std goes
// through Linear(1 → d_model), "embed_input.{weight [d_model, 1], bias [d_model]}", PyTorch's
// default Linear init.
#include "core/error.h"
#include "core/runtime/ops/elementwise.h"
#include "core/runtime/ops/linear.h"
#include "layers/module/init.h"
#include "layers/inputs/input_table.h"

namespace tn {
namespace {

class LinearInput final : public InputModule {
 public:
  LinearInput(const ModelConfig& c, ParamStore& store, Rng& rng) : levels_(c.vocab_size) {
    weight_ = store.add_parameter("embed_input.weight", {c.d_model, 1});
    bias_ = store.add_parameter("embed_input.bias", {c.d_model});
    linear_default(weight_->value, &bias_->value, rng);
    values_.resize(static_cast<size_t>(levels_));
    for (int64_t level = 0; level < levels_; ++level)
      values_[static_cast<size_t>(level)] = static_cast<float>((static_cast<double>(level) - c.input.mean) / c.input.std);
  }
  Var forward(ForwardContext& ctx, const std::vector<int32_t>& ids, int64_t batch, int64_t seq_len,
              float scale) override {
    if (static_cast<int64_t>(ids.size()) != batch * seq_len)
      throw ShapeError("[linear input] " + std::to_string(ids.size()) + " ids for " + std::to_string(batch) + "x" +
                       std::to_string(seq_len));
    Tensor v = Tensor::empty({batch, seq_len, 1});
    float* out = v.data();
    for (size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] < 0 || ids[i] >= levels_)
        throw ShapeError("[linear input] level " + std::to_string(ids[i]) + " outside [0, " + std::to_string(levels_) +
                         ") (model.vocab_size)");
      out[i] = values_[static_cast<size_t>(ids[i])];
    }
    Var x = linear(ctx.tape, make_var(std::move(v)), weight_, bias_);
    return scale == 1.0f ? x : tn::scale(ctx.tape, x, scale);
  }
  Var tied_weight() const override { return nullptr; }

 private:
  int64_t levels_;
  std::vector<float> values_;  // level -> (level − mean) / std
  Var weight_, bias_;
};

}  // namespace

InputEntry linear_input_entry() {
  return InputEntry{
      InputKind::Linear, "linear", "real values (levels mapped by mean and std) through Linear(1 -> d_model): LRA Image, Pathfinder",
      [](const ModelConfig& c, ParamStore& store, Rng& rng) -> std::unique_ptr<InputModule> {
        return std::make_unique<LinearInput>(c, store, rng);
      },
      [](const ModelConfig& c) { return 2.0 * static_cast<double>(c.d_model); },
      [](const ModelConfig& c, double positions) { return 2.0 * positions * static_cast<double>(c.d_model); }, false,
      true};
}

}  // namespace tn
