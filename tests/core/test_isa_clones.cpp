// Run-time instruction-set choice (core/runtime/math/isa_clones.h) and the span split that feeds the
// cloned loops (core/runtime/parallel.h).
#include <doctest/doctest.h>
#include <omp.h>

#include <string>
#include <vector>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "core/runtime/math/isa_clones.h"
#include "core/runtime/parallel.h"
#include "core/platform/system.h"

using namespace tn;

#if defined(TN_ISA_DISPATCH) && defined(__x86_64__)
namespace {

/// The x86-64 psABI level this CPU and OS reach, read from CPUID and XGETBV by hand (Intel SDM
/// vol. 2A, CPUID; the levels as the psABI defines them), independently of GCC's resolver.
std::string cpuid_level() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return "x86-64";
  const unsigned l1c = c;
  __cpuid_count(7, 0, a, b, c, d);
  const unsigned l7b = b;
  __get_cpuid(0x80000001, &a, &b, &c, &d);
  const unsigned ext_c = c;
  auto bit = [](unsigned reg, int n) { return ((reg >> n) & 1u) != 0; };
  const bool osxsave = bit(l1c, 27);
  unsigned lo = 0, hi = 0;  // XCR0: the register state the OS saves (XGETBV needs OSXSAVE)
  if (osxsave) __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  const unsigned long long xcr0 = (static_cast<unsigned long long>(hi) << 32) | lo;
  // v3: AVX, AVX2, BMI1, BMI2, F16C, FMA, LZCNT, MOVBE, XSAVE, with SSE and AVX state enabled.
  const bool v3 = bit(l1c, 28) && bit(l7b, 5) && bit(l7b, 3) && bit(l7b, 8) && bit(l1c, 29) &&
                  bit(l1c, 12) && bit(ext_c, 5) && bit(l1c, 22) && bit(l1c, 26) &&
                  (xcr0 & 0x6) == 0x6;
  // v4: AVX-512 F, BW, CD, DQ, VL, with opmask and ZMM state enabled.
  const bool v4 = v3 && bit(l7b, 16) && bit(l7b, 30) && bit(l7b, 28) && bit(l7b, 17) &&
                  bit(l7b, 31) && (xcr0 & 0xe0) == 0xe0;
  return v4 ? "x86-64-v4" : v3 ? "x86-64-v3" : "x86-64";
}

}  // namespace
#endif

TEST_CASE("kernel_isa: the psABI level that CPUID and XGETBV give, read by hand") {
  const std::string isa = kernel_isa();
#if defined(TN_ISA_DISPATCHED) && defined(__x86_64__)
  CHECK(isa == cpuid_level());
#elif defined(TN_ISA_DISPATCH)
  CHECK(isa == "x86-64");  // clang: no clones, the baseline code
#else
  CHECK(isa == "native");
#endif
}

#if defined(__x86_64__)
TEST_CASE("cpu_info: the AVX2, AVX-512 F, AVX-512 BF16 and AMX BF16 bits of CPUID leaf 7, read by hand") {
  // Intel SDM vol. 2A, CPUID leaf 07H: subleaf 0 EBX bit 5 AVX2, bit 16 AVX512F, EDX bit 22
  // AMX-BF16, EAX the last subleaf; subleaf 1 EAX bit 5 AVX512_BF16.
  unsigned a = 0, b = 0, c = 0, d = 0;
  REQUIRE(__get_cpuid_max(0, nullptr) >= 7);
  __cpuid_count(7, 0, a, b, c, d);
  const unsigned last_subleaf = a, l7b = b, l7d = d;
  unsigned l71a = 0;
  if (last_subleaf >= 1) {
    __cpuid_count(7, 1, a, b, c, d);
    l71a = a;
  }
  auto bit = [](unsigned reg, int n) { return ((reg >> n) & 1u) != 0; };
  const CpuInfo info = cpu_info();
  CHECK(!info.model.empty());
  // Linux lists a feature only where the CPU has it and the kernel enabled its state, so each flag
  // implies its CPUID bit; AVX2 and AVX-512 F are enabled by every kernel that runs this build.
  CHECK(info.avx2 == bit(l7b, 5));
  CHECK(info.avx512f == bit(l7b, 16));
  if (info.avx512_bf16) CHECK(bit(l71a, 5));
  if (info.amx_bf16) CHECK(bit(l7d, 22));
  if (info.avx512_bf16) CHECK(info.avx512f);
}
#endif

TEST_CASE("parallel_spans: contiguous spans in thread order that cover 0 to n once") {
  for (int64_t n : {0, 1, 7, 32768, 32769, 100003}) {
    const int threads = omp_get_max_threads();
    std::vector<std::pair<int64_t, int64_t>> spans(size_t(threads), {-1, -1});
    std::vector<int> hits(size_t(n), 0);
    parallel_spans(n, 32768, [&](int64_t begin, int64_t end) {
      const int t = omp_in_parallel() ? omp_get_thread_num() : 0;
      spans[size_t(t)] = {begin, end};
      for (int64_t i = begin; i < end; ++i) ++hits[size_t(i)];
    });
    for (int64_t i = 0; i < n; ++i) REQUIRE(hits[size_t(i)] == 1);
    if (n <= 32768) {
      CHECK(spans[0] == std::pair<int64_t, int64_t>{0, n});  // below the threshold: one call
      continue;
    }
    int64_t next = 0;  // thread t's span starts where thread t − 1's ended
    for (const auto& [begin, end] : spans) {
      if (begin < 0) continue;
      CHECK(begin == next);
      next = end;
    }
    CHECK(next == n);
  }
}

namespace {
/// Records the width of the vector type run_at_width chose.
struct WidthProbe {
  template <class V>
  static void run(int& floats) {
    floats = int(sizeof(V) / sizeof(float));
  }
};
}  // namespace

TEST_CASE("run_at_width: the vector width of the instruction set kernel_isa names") {
  int floats = 0;
  run_at_width<WidthProbe>(floats);
  const std::string isa = kernel_isa();
  if (isa == "x86-64-v4") CHECK(floats == 16);
  if (isa == "x86-64-v3") CHECK(floats == 8);
  if (isa == "x86-64") CHECK(floats == 4);
  if (isa == "native") {
#if defined(__AVX512F__)
    CHECK(floats == 16);
#elif defined(__AVX2__)
    CHECK(floats == 8);
#else
    CHECK(floats == 4);
#endif
  }
}
