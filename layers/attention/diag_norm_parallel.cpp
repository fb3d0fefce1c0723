#include "layers/attention/diag_norm_parallel.h"

#include "core/runtime/ops/elementwise.h"
#include "layers/attention/mixer_table.h"

namespace tn {
namespace {

/// The two branches' decoding states, advanced together.
class ParallelDecodeState : public DecodeState {
 public:
  ParallelDecodeState(std::unique_ptr<DecodeState> diag, std::unique_ptr<DecodeState> norm)
      : diag(std::move(diag)), norm(std::move(norm)) {}
  int64_t size_bytes() const override { return diag->size_bytes() + norm->size_bytes(); }
  std::unique_ptr<DecodeState> diag, norm;
};

}  // namespace

DiagNormParallel::DiagNormParallel(const ModelConfig& config, ParamStore& store, const std::string& prefix,
                                   Rng& rng)
    : diag_(mixer_entry(MixerKind::Diag).make(config, store, prefix + ".diag", rng)),
      norm_(mixer_entry(MixerKind::NormAttention).make(config, store, prefix + ".norm", rng)) {}

Var DiagNormParallel::forward(ForwardContext& ctx, const Var& x) {
  // Two statements: the branches run in this order (their taps, and any dropout draws, with them).
  const Var diag = diag_->forward(ctx, x);
  const Var norm = norm_->forward(ctx, x);
  return add(ctx.tape, diag, norm);
}

std::unique_ptr<DecodeState> DiagNormParallel::start_decode() const {
  return std::make_unique<ParallelDecodeState>(diag_->start_decode(), norm_->start_decode());
}

Var DiagNormParallel::decode_step(ForwardContext& ctx, DecodeState& state, const Var& x, int64_t position) {
  auto& both = decode_state_as<ParallelDecodeState>(state, "DiagNormParallel::decode_step");
  both.advance("DiagNormParallel::decode_step", position);
  const Var diag = diag_->decode_step(ctx, *both.diag, x, position);
  const Var norm = norm_->decode_step(ctx, *both.norm, x, position);
  return add(ctx.tape, diag, norm);
}

}  // namespace tn
