// The process-wide thread count (core/runtime/dnnl/engine.h).
#include <doctest/doctest.h>
#include <omp.h>
#include <sched.h>

#include "core/runtime/dnnl/engine.h"

using namespace tn;

TEST_CASE("threads: a count above the CPUs this process may use is lowered to them") {
  const int saved = omp_get_max_threads();
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
  const int cpus = CPU_COUNT(&set);
  CHECK(available_cpus() == cpus);
  set_num_threads(cpus + 7);
  CHECK(num_threads() == cpus);
  set_num_threads(1);
  CHECK(num_threads() == 1);
  set_num_threads(0);  // 0 leaves the count as it is
  CHECK(num_threads() == 1);
  omp_set_num_threads(saved);
}
