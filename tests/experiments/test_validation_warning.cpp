// The warning for a validation loss far above the training loss (experiments/runner/validation_warning.h).
#include <doctest/doctest.h>

#include "experiments/runner/validation_warning.h"

using tn::outlying_validation_warning;

namespace {
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("validation warning: a loss of 2.95e+09 beside 0.69 under BatchNorm names the running statistics") {
  const std::string w = outlying_validation_warning(2.95e9, 0.69, true);
  // 2.95e9 / 0.69 = 4.275e9, printed with 3 significant digits.
  CHECK(contains(w, "the validation loss 2.95e+09 is 4.28e+09 times the training loss 0.69"));
  CHECK(contains(w, "running statistics"));
  const std::string plain = outlying_validation_warning(2.95e9, 0.69, false);
  CHECK(contains(plain, "overfitting"));
  CHECK_FALSE(contains(plain, "BatchNorm"));
}

TEST_CASE("validation warning: nothing below 100 nats or below 100 times the training loss") {
  CHECK(outlying_validation_warning(99.0, 0.5, true).empty());     // 198 times, but under 100 nats
  CHECK(outlying_validation_warning(150.0, 2.0, true).empty());    // 75 times
  CHECK(outlying_validation_warning(0.7, 0.69, true).empty());     // the usual case
  CHECK_FALSE(outlying_validation_warning(201.0, 2.0, true).empty());  // 100.5 times, over 100 nats
  CHECK(outlying_validation_warning(1e300, 1e299, true).empty());  // 10 times
}
