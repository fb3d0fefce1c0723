#pragma once
// Progress of long work on stderr (spdlog): a line at most every few seconds with how far it is,
// the time so far and the ETA; nothing for work that ends sooner.
#include <chrono>
#include <cstdint>
#include <string>

namespace tn {

/// "m:ss" (minutes may exceed 59): 75.4 → "1:15".
std::string format_duration(double seconds);

/// Logs "<what>: done of total <unit> (p %), elapsed, ETA m:ss" when advance() is called at least
/// `interval_s` seconds after the start or the last line (10 s by default).
class Progress {
 public:
  Progress(std::string what, std::string unit, int64_t total, double interval_s = 10.0);
  /// `done` units finished so far.
  void advance(int64_t done);

 private:
  using Clock = std::chrono::steady_clock;
  std::string what_, unit_;
  int64_t total_;
  double interval_s_;
  Clock::time_point start_, last_;
};

}  // namespace tn
