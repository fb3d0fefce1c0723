#pragma once
// Process and machine facts for reports and checks.

namespace tn {

/// Peak resident set size of this process so far, in MiB (getrusage ru_maxrss).
double peak_rss_mb();

/// The machine's physical memory in bytes (sysconf _SC_PHYS_PAGES × _SC_PAGE_SIZE); 0 when unknown.
double physical_memory_bytes();

}  // namespace tn
