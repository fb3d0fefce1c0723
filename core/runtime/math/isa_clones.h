#pragma once
// Run-time choice of instruction set for this project's own hot loops (the ones oneDNN does not
// run: softmax cross-entropy rows, the attention kernels, dropout, AdamW, gradient clipping, bias
// gradients).
//
// The default build targets the x86-64 baseline (SSE2), so one binary starts on every x86-64
// machine of a cluster. A function marked TN_ISA_CLONES is compiled three times, for x86-64-v4
// (AVX-512 F/BW/CD/DQ/VL), x86-64-v3 (AVX2, FMA) and the baseline, and the loader picks the best
// one the CPU has (GCC function multi-versioning through an ifunc resolver), as oneDNN picks its
// own kernels at run time. Every call inside such a function is inlined into each clone (flatten):
// a helper or lambda left as a call would run its baseline code. Everything that runs per element
// belongs in a marked function: an OpenMP parallel region is outlined into a function of its own,
// which is not cloned, so the marked function is the one the region calls per row, head or block.
//
// A clone cannot change its source, only how it is compiled, so code written for one vector width
// goes through run_at_width instead: Kernel::run<V> is compiled three times with V the vector
// type of each instruction set (16, 8 or 4 floats). GCC's vector types wider than the target's
// registers are lowered through the stack (a 16-float type on AVX2: 15x slower than on AVX-512).
// The native build (-DTN_NATIVE=ON, -march=native) needs no clones: the macro is empty and
// run_at_width runs the one width of the target.
//
// The clones may differ in the last bits (FMA contraction on v3/v4), as builds for different CPUs
// always have; tests compare with tolerances that cover that.

#if defined(TN_ISA_DISPATCH) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TN_ISA_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), flatten))
#define TN_ISA_DISPATCHED 1
#else
#define TN_ISA_CLONES
#endif

#include <utility>

namespace tn {

/// The instruction set the hot loops run on in this process: "native" (a -march=native build),
/// "x86-64-v4", "x86-64-v3" or "x86-64" (the clone the loader picks on this CPU); for logs and
/// bench reports.
const char* kernel_isa();

/// GCC/Clang vector types: 16, 8 and 4 floats (one zmm, ymm or xmm register).
typedef float F32x16 __attribute__((vector_size(64)));
typedef float F32x8 __attribute__((vector_size(32)));
typedef float F32x4 __attribute__((vector_size(16)));

#ifdef TN_ISA_DISPATCHED
namespace isa_detail {
/// 4 for x86-64-v4, 3 for x86-64-v3, 1 for the baseline: the choice kernel_isa() reports.
int level();

template <class Kernel, class... Args>
__attribute__((target("arch=x86-64-v4"), flatten)) void run_v4(Args&&... args) {
  Kernel::template run<F32x16>(std::forward<Args>(args)...);
}
template <class Kernel, class... Args>
__attribute__((target("arch=x86-64-v3"), flatten)) void run_v3(Args&&... args) {
  Kernel::template run<F32x8>(std::forward<Args>(args)...);
}
template <class Kernel, class... Args>
__attribute__((flatten)) void run_baseline(Args&&... args) {
  Kernel::template run<F32x4>(std::forward<Args>(args)...);
}
}  // namespace isa_detail

/// Runs Kernel::template run<V>(args...) compiled for this CPU's instruction set (the one
/// kernel_isa() names), V its vector type: F32x16 on x86-64-v4, F32x8 on x86-64-v3, F32x4 on the
/// baseline. Every call inside run is inlined (flatten), as with TN_ISA_CLONES.
template <class Kernel, class... Args>
void run_at_width(Args&&... args) {
  static const int level = isa_detail::level();
  if (level == 4)
    isa_detail::run_v4<Kernel>(std::forward<Args>(args)...);
  else if (level == 3)
    isa_detail::run_v3<Kernel>(std::forward<Args>(args)...);
  else
    isa_detail::run_baseline<Kernel>(std::forward<Args>(args)...);
}
#else
/// The native build: V is the widest vector of the compile-time target.
template <class Kernel, class... Args>
void run_at_width(Args&&... args) {
#if defined(__AVX512F__)
  Kernel::template run<F32x16>(std::forward<Args>(args)...);
#elif defined(__AVX2__)
  Kernel::template run<F32x8>(std::forward<Args>(args)...);
#else
  Kernel::template run<F32x4>(std::forward<Args>(args)...);
#endif
}
#endif

}  // namespace tn
