#pragma once
#include <cstdint>

namespace tn {

/// Target id that contributes no loss (PyTorch's ignore_index; padded targets).
inline constexpr int32_t kIgnoreIndex = -100;

}  // namespace tn
