#pragma once
// Process and machine facts for reports and checks.
#include <string>

namespace tn {

/// Peak resident set size of this process so far, in MiB (getrusage ru_maxrss).
double peak_rss_mb();

/// The machine's physical memory in bytes (sysconf _SC_PHYS_PAGES × _SC_PAGE_SIZE); 0 when unknown.
double physical_memory_bytes();

/// The time now in UTC, ISO 8601 to the second: "2026-12-07T00:40:00Z".
std::string utc_now();

/// The memory this process may use: the least of the machine's physical memory, the address-space
/// limit (ulimit -v, RLIMIT_AS) and its cgroup's limit (v2 memory.max, v1 memory.limit_in_bytes).
struct MemoryLimit {
  double bytes = 0;    // 0 when unknown
  std::string source;  // "this machine's memory", "the address-space limit (ulimit -v)", "its cgroup's memory limit"
};
MemoryLimit memory_limit();

/// The CPU as Linux describes it (the first processor of /proc/cpuinfo): its model name and the
/// instruction-set features that decide how fast f32 and bf16 products run (AVX2; AVX-512 F;
/// AVX-512 BF16, oneDNN's native bf16 matmul; AMX BF16, its tile kernels). Empty and false where
/// /proc/cpuinfo is unreadable.
struct CpuInfo {
  std::string model;
  bool avx2 = false, avx512f = false, avx512_bf16 = false, amx_bf16 = false;
};
CpuInfo cpu_info();

}  // namespace tn
