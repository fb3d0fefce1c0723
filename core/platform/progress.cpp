#include "core/platform/progress.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tn {

std::string format_duration(double seconds) {
  // Capped at 10^12 s (beyond any real run; also a NaN or an infinite estimate) so the integer
  // cannot overflow: an ETA for max_steps near 2^63 prints a large number, not a negative one.
  const double s = std::isfinite(seconds) ? std::clamp(seconds, 0.0, 1e12) : 1e12;
  const int64_t total = static_cast<int64_t>(s + 0.5);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%lld:%02lld", static_cast<long long>(total / 60),
                static_cast<long long>(total % 60));
  return buf;
}

Progress::Progress(std::string what, std::string unit, int64_t total, double interval_s)
    : what_(std::move(what)), unit_(std::move(unit)), total_(total), interval_s_(interval_s),
      start_(Clock::now()), last_(start_) {}

void Progress::advance(int64_t done) {
  const Clock::time_point now = Clock::now();
  if (std::chrono::duration<double>(now - last_).count() < interval_s_ || done <= 0 || total_ <= 0) return;
  last_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double eta = elapsed * static_cast<double>(total_ - done) / static_cast<double>(done);
  spdlog::info("{}: {} of {} {} ({:.0f} %), {} so far, ETA {}", what_, done, total_, unit_,
               100.0 * static_cast<double>(done) / static_cast<double>(total_), format_duration(elapsed),
               format_duration(eta));
}

}  // namespace tn
