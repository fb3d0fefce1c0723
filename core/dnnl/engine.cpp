#include "core/dnnl/engine.h"

#include <omp.h>

namespace tn {

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& cpu_stream() {
  static dnnl::stream stream(cpu_engine());
  return stream;
}

void set_num_threads(int threads) {
  if (threads > 0) omp_set_num_threads(threads);
}

int num_threads() { return omp_get_max_threads(); }

}  // namespace tn
