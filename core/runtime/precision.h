#pragma once
// The precision of the dense products in training (`train.precision`, `bench --precision`):
// f32, or bf16 operands with f32 accumulation, master weights and optimizer state.
#include <string_view>

namespace tn {

enum class Precision { F32, BF16 };

/// "f32" or "bf16", the spelling in specs and on the command line.
constexpr std::string_view to_string(Precision p) { return p == Precision::BF16 ? "bf16" : "f32"; }

}  // namespace tn
