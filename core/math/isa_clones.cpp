#include "core/math/isa_clones.h"

namespace tn {

const char* kernel_isa() {
#if defined(TN_ISA_DISPATCH) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  // The same tests, in the same order, as the resolver GCC emits for TN_ISA_CLONES.
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4")) return "x86-64-v4";
  if (__builtin_cpu_supports("x86-64-v3")) return "x86-64-v3";
  return "x86-64";
#else
  return "native";
#endif
}

}  // namespace tn
