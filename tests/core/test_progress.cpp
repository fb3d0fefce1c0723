// format_duration (the elapsed time and ETA of progress lines) and CancelScope (core/platform/cancel.h).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "core/platform/cancel.h"
#include "core/platform/progress.h"

using namespace tn;

TEST_CASE("format_duration: m:ss by hand, and huge, infinite or NaN estimates never negative") {
  CHECK(format_duration(0.0) == "0:00");
  CHECK(format_duration(75.4) == "1:15");
  CHECK(format_duration(3600.0) == "60:00");
  CHECK(format_duration(-3.0) == "0:00");
  // An ETA for max_steps near 2^63: 9.2e18 steps at 0.01 s; the int of before printed "-35791394:-8".
  CHECK(format_duration(9.2e16) == "16666666666:40");  // capped at 10^12 s = 16,666,666,666 min 40 s
  CHECK(format_duration(std::numeric_limits<double>::infinity()) == "16666666666:40");
  CHECK(format_duration(std::nan("")) == "16666666666:40");
}

TEST_CASE("CancelScope: throw_if_cancelled throws only inside a scope whose check says stop") {
  CHECK_NOTHROW(throw_if_cancelled());
  bool stop = false;
  {
    CancelScope scope([&] { return stop; });
    CHECK_NOTHROW(throw_if_cancelled());
    stop = true;
    CHECK_THROWS_AS(throw_if_cancelled(), Cancelled);
    {
      CancelScope none{std::function<bool()>()};  // an empty check: nothing installed inside
      CHECK_NOTHROW(throw_if_cancelled());
    }
    CHECK_THROWS_AS(throw_if_cancelled(), Cancelled);  // the outer scope is back
  }
  CHECK_NOTHROW(throw_if_cancelled());
}
