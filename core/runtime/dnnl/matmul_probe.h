#pragma once
// Matmul throughput probe: times one large oneDNN matmul C[M,N] = A[M,K] · B[K,N] (plain row-major
// layouts, as core/runtime/dnnl/matmul.h uses them) to measure what this machine's matmul reaches, the
// denominator of model-FLOP utilisation (`transnormer bench`, docs/performance.md).
// f32: A, B, C in f32 (what the model runs). bf16: A and B in bf16, C in f32 (what a bf16 matmul
// path would reach; AVX-512 BF16 / AMX kernels when the CPU has them).
#include <cstdint>
#include <string>

namespace tn {

enum class ProbeType { F32, BF16 };

struct MatmulProbeResult {
  bool ok = false;
  std::string error;        // why it did not run (no bf16 kernel on this CPU, oneDNN error)
  std::string impl;         // oneDNN implementation name, e.g. "brg:avx512_core"
  int64_t m = 0, n = 0, k = 0;
  int reps = 0;
  double best_s = 0, median_s = 0;
  double gflops = 0;        // 2·M·N·K / best_s / 1e9: the peak the probe saw
  double median_gflops = 0; // same from the median rep
};

/// Builds the primitive, runs `warmup` untimed reps, then `reps` timed reps (inputs filled with
/// small random values; the first touch of the buffers happens before timing). Uses the OpenMP
/// thread count in force. A "ref" (reference, unvectorised) implementation is not timed at large
/// sizes, nor is bf16 where it is emulated (bf16_matmul_native() false: it would time the f32
/// kernel): the result says so in `error` and ok is false.
MatmulProbeResult probe_matmul(ProbeType type, int64_t m, int64_t n, int64_t k, int reps = 5,
                               int warmup = 1);

const char* to_string(ProbeType type);

}  // namespace tn
