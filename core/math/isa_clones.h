#pragma once
// Run-time choice of instruction set for this project's own hot loops (the ones oneDNN does not
// run: softmax cross-entropy rows, the attention kernels, norms, dropout, AdamW).
//
// The default build targets the x86-64 baseline (SSE2), so one binary starts on every x86-64
// machine of a cluster. A function marked TN_ISA_CLONES is compiled three times, for x86-64-v4
// (AVX-512 F/BW/CD/DQ/VL), x86-64-v3 (AVX2, FMA) and the baseline, and the loader picks the best
// one the CPU has (GCC function multi-versioning through an ifunc resolver), as oneDNN picks its
// own kernels at run time. Every call inside such a function is inlined into each clone (flatten):
// a helper or lambda left as a call would run its baseline code. Everything that runs per element belongs in a marked function: an OpenMP parallel region
// is outlined into a function of its own, which is not cloned, so the marked function is the one
// the region calls per row, head or block. The native build (-DTN_NATIVE=ON, -march=native)
// needs no clones and the macro is empty.
//
// The clones may differ in the last bits (FMA contraction on v3/v4), as builds for different CPUs
// always have; tests compare with tolerances that cover that.

#if defined(TN_ISA_DISPATCH) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TN_ISA_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), flatten))
#else
#define TN_ISA_CLONES
#endif

namespace tn {

/// The instruction set the hot loops run on in this process: "native" (a -march=native build),
/// "x86-64-v4", "x86-64-v3" or "x86-64" (the clone the loader picks on this CPU); for logs and
/// bench reports.
const char* kernel_isa();

}  // namespace tn
