#pragma once
// One operand of a dense product on either tape precision: the f32 values, or on a bf16 tape
// their bf16 copy, made once and shared by every product that reads it (core/runtime/ops/linear.cpp,
// core/runtime/ops/swiglu.cpp).
#include <memory>

#include "core/runtime/autograd/tape.h"
#include "core/runtime/dnnl/matmul.h"

namespace tn {

/// f32 values (read when the product runs), or their bf16 copy; exactly one is set.
struct Operand {
  const float* f32 = nullptr;
  std::shared_ptr<const Bf16Buffer> bf16;
};

/// The operand of `data`: the copy `convert()` returns on a bf16 tape, else data itself.
template <class Convert>
Operand operand(bool bf16, const float* data, Convert&& convert) {
  return bf16 ? Operand{nullptr, convert()} : Operand{data, nullptr};
}

/// The operand of a parameter W: its f32 values, or on a bf16 tape its bf16 rounding. On a
/// recording tape with W trained, that is W's bf16_copy (made here when missing or out of date,
/// then kept current by the optimizer: core/runtime/optim/adamw.cpp), so the weights are not converted
/// again at every forward; otherwise a fresh copy (evaluation, frozen weights).
Operand weight_operand(const Tape& tape, const Var& w);

/// C (+)= op(A)·op(B) (+ bias) for s, in the operands' precision (both bf16 or both f32).
inline void product(MatmulShape s, const Operand& a, const Operand& b, float* c,
                    const float* bias = nullptr) {
  if (a.bf16) {
    s.bf16 = true;
    matmul_bf16(s, a.bf16->data(), b.bf16->data(), c, bias);
  } else {
    matmul(s, a.f32, b.f32, c, bias);
  }
}

}  // namespace tn
