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

/// Sets the OpenMP thread count used by oneDNN and by our own kernels (0: leave the default). A
/// count above available_cpus() is lowered to it, with a warning: threads beyond the cores only
/// wait for each other in every barrier (1,024 threads on 2 cores never finished a step).
void set_num_threads(int threads);
/// The CPUs this process may run on (its affinity mask: a Slurm or MPI binding counts), at least 1.
int available_cpus();
/// The thread count in force.
int num_threads();

/// The instruction set oneDNN dispatches its kernels for on this CPU (dnnl::get_effective_cpu_isa):
/// "avx512_core_bf16" where bf16 products run natively, "avx512_core" or "avx2" where they are
/// emulated (core/runtime/dnnl/matmul.h), and so on.
const char* onednn_cpu_isa();

}  // namespace tn
