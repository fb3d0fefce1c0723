#pragma once
// The fuzz targets (docs/testing.md, "Fuzzing"): one entry per parser of outside input, each
// feeding a byte string to the very function the CLI calls on that input. The libFuzzer
// executables (tests/fuzz_entry.cpp, one per target, built with -DTN_FUZZ=ON) and the test binary
// that replays the seed corpora and the kept regressions (test_fuzz_corpus.cpp) share this table.
#include <string>
#include <string_view>
#include <vector>

namespace tn::fuzz {

struct FuzzTarget {
  const char* name;  // the corpus folder tests/fuzz/corpus/<name> and the executable fuzz_<name>
  const char* what;  // the input, in a few words
  /// Parses `bytes` as the CLI would. A ConfigError or DataError is a clean refusal; any other
  /// exception, a crash or a sanitizer report is a defect.
  void (*run)(std::string_view bytes);
};

/// Every target, in a stable order.
const std::vector<FuzzTarget>& fuzz_targets();

/// The target called `name`, or nullptr.
const FuzzTarget* find_fuzz_target(std::string_view name);

/// What running `target` on one input gave.
struct FuzzOutcome {
  enum class Kind { Accepted, Refused, Defect };
  Kind kind = Kind::Accepted;
  /// The refusal's message (a ConfigError or DataError), or what the defect was (an exception of
  /// another type, with its message); "" when accepted.
  std::string message;
};

/// Runs `target` on `bytes`, catching what it throws.
FuzzOutcome run_fuzz_input(const FuzzTarget& target, std::string_view bytes);

}  // namespace tn::fuzz
