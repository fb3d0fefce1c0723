#include "core/runtime/ops/operand.h"

namespace tn {

Operand weight_operand(const Tape& tape, const Var& w) {
  const Tensor& t = w->value;
  if (!tape.bf16()) return {t.data(), nullptr};
  if (!tape.enabled() || !w->requires_grad) return {nullptr, Bf16Buffer::copy_of(t.data(), t.numel())};
  if (!w->bf16_current || !w->bf16_copy || w->bf16_copy->size() != t.numel()) {
    if (!w->bf16_copy || w->bf16_copy.use_count() > 1 || w->bf16_copy->size() != t.numel())
      w->bf16_copy = std::make_shared<Bf16Buffer>(t.numel());  // never rewrite a copy someone holds
    to_bf16_flat(t.data(), w->bf16_copy->data(), t.numel());
    w->bf16_current = true;
  }
  return {nullptr, w->bf16_copy};
}

}  // namespace tn
