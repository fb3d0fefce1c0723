#pragma once
// Process facts for reports.

namespace tn {

/// Peak resident set size of this process so far, in MiB (getrusage ru_maxrss).
double peak_rss_mb();

}  // namespace tn
