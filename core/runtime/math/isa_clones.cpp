#include "core/runtime/math/isa_clones.h"

namespace tn {

#ifdef TN_ISA_DISPATCHED
int isa_detail::level() {
  // The same tests, in the same order, as the resolver GCC emits for TN_ISA_CLONES.
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4")) return 4;
  if (__builtin_cpu_supports("x86-64-v3")) return 3;
  return 1;
}

const char* kernel_isa() {
  const int level = isa_detail::level();
  return level == 4 ? "x86-64-v4" : level == 3 ? "x86-64-v3" : "x86-64";
}
#elif defined(TN_ISA_DISPATCH)
// A portable build by a compiler without GCC's function multi-versioning (clang: the sanitizer
// and fuzz build): the hot loops run their baseline code.
const char* kernel_isa() { return "x86-64"; }
#else
const char* kernel_isa() { return "native"; }
#endif

}  // namespace tn
