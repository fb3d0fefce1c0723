#pragma once
// The one process-wide oneDNN CPU engine and stream (the only global state besides the primitive
// caches). oneDNN threads with OpenMP: call set_num_threads() before the first
// primitive is created, since a primitive keeps the thread count it was created with.
#include <oneapi/dnnl/dnnl.hpp>

namespace tn {

/// The CPU engine; making it turns OpenMP's dynamic adjustment of team sizes off (OMP_DYNAMIC),
/// which oneDNN's OpenMP code does not survive.
dnnl::engine& cpu_engine();
dnnl::stream& cpu_stream();

/// Sets the OpenMP thread count used by oneDNN and by our own kernels (0: leave the default).
void set_num_threads(int threads);
/// The thread count in force.
int num_threads();

/// The instruction set oneDNN dispatches its kernels for on this CPU (dnnl::get_effective_cpu_isa):
/// "avx512_core_bf16" where bf16 products run natively, "avx512_core" or "avx2" where they are
/// emulated (core/dnnl/matmul.h), and so on.
const char* onednn_cpu_isa();

}  // namespace tn
