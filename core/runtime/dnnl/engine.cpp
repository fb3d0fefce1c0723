#include "core/runtime/dnnl/engine.h"

#include <sched.h>

#include <thread>

#include <omp.h>
#include <spdlog/spdlog.h>

namespace tn {

dnnl::engine& cpu_engine() {
  static dnnl::engine engine = [] {
    // oneDNN's OpenMP code (and the row blocks of core/runtime/dnnl/matmul.cpp) expect a parallel region
    // to get the threads it asks for: with OMP_DYNAMIC=true the runtime may give fewer, and
    // oneDNN then leaves part of a product uncomputed.
    omp_set_dynamic(0);
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return engine;
}

dnnl::stream& cpu_stream() {
  static dnnl::stream stream(cpu_engine());
  return stream;
}

int available_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

void set_num_threads(int threads) {
  if (threads <= 0) return;
  const int cpus = available_cpus();
  if (threads > cpus) {
    spdlog::warn("{} threads asked for, but this process may run on {} CPU(s): using {} (threads "
                 "beyond the cores only wait for each other)",
                 threads, cpus, cpus);
    threads = cpus;
  }
  omp_set_num_threads(threads);
}

int num_threads() { return omp_get_max_threads(); }

const char* onednn_cpu_isa() {
  using isa = dnnl::cpu_isa;
  switch (dnnl::get_effective_cpu_isa()) {
    case isa::sse41: return "sse41";
    case isa::avx: return "avx";
    case isa::avx2: return "avx2";
    case isa::avx2_vnni: return "avx2_vnni";
    case isa::avx512_mic: return "avx512_mic";
    case isa::avx512_mic_4ops: return "avx512_mic_4ops";
    case isa::avx512_core: return "avx512_core";
    case isa::avx512_core_vnni: return "avx512_core_vnni";
    case isa::avx512_core_bf16: return "avx512_core_bf16";
    case isa::avx512_core_amx: return "avx512_core_amx";
    default: return "other";
  }
}

}  // namespace tn
