#pragma once
// The mixer walkthrough's example (docs/architecture.md, "Add a token mixer", step 1): uniform
// attention, every query attending to every visible key with the same weight,
//   o_t = W_o · mean_{s visible from t} (x_s W_v + b_v),
// visible = s ≤ t in a decoder, every real position in an encoder; padded keys are left out. The
// control that shows what learnt attention weights add. Built from the library's operations (a
// linear attention whose q and k are a single feature 1, divided by its denominator, the count),
// registered with add_mixer (layers/attention/mixer_table.h) by uniform_attention_entry.cpp, so
// every table-driven test (causality, padding, finite differences, decoding, option round trips)
// runs it. No incremental form: a decoder recomputes the prefix.
#include <string>

#include "core/runtime/rng.h"
#include "layers/attention/projections.h"
#include "layers/config/model_config.h"
#include "layers/module/module.h"
#include "layers/module/param_store.h"

namespace tn::walkthrough {

class UniformAttention : public TokenMixer {
 public:
  /// v and out projections [d_model, d_model] with biases under `prefix`.
  UniformAttention(const ModelConfig& config, ParamStore& store, const std::string& prefix, Rng& rng);
  /// x [B, T, d_model] → [B, T, d_model].
  Var forward(ForwardContext& ctx, const Var& x) override;

  static constexpr int64_t kChunk = 64;  // the linear attention's chunk (its causal tiles)

 private:
  int64_t n_heads_;
  bool causal_;
  Projection v_, out_;
};

}  // namespace tn::walkthrough
