// The matmul throughput probe (bench's MFU denominator): what it times and what it refuses to time.
#include <doctest/doctest.h>

#include <string>

#include "core/runtime/dnnl/matmul.h"
#include "core/runtime/dnnl/matmul_probe.h"

using namespace tn;

TEST_CASE("probe_matmul: f32 is timed, with best <= median, and bf16 only where it is native") {
  const MatmulProbeResult f32 = probe_matmul(ProbeType::F32, 64, 48, 32, 3, 1);
  INFO(f32.error);
  REQUIRE(f32.ok);
  CHECK(f32.reps == 3);
  CHECK(f32.best_s > 0.0);
  CHECK(f32.best_s <= f32.median_s);
  CHECK(f32.gflops == doctest::Approx(2.0 * 64 * 48 * 32 / f32.best_s / 1e9));
  CHECK(f32.gflops >= f32.median_gflops);
  CHECK_FALSE(f32.impl.empty());

  const MatmulProbeResult bf16 = probe_matmul(ProbeType::BF16, 64, 48, 32, 3, 1);
  CHECK(bf16.ok == bf16_matmul_native());
  if (!bf16_matmul_native()) {  // the emulation is the f32 kernel: not reported as a bf16 peak
    CHECK(bf16.gflops == 0.0);
    CHECK(bf16.error.find("emulated") != std::string::npos);
  }
}
