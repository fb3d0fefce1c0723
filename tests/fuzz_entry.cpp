// The libFuzzer entry point of one fuzz target (tests/fuzz/fuzz_targets.h), chosen at compile time
// by TN_FUZZ_TARGET: built as fuzz_<name> when CMake runs with -DTN_FUZZ=ON (clang). A refusal
// (ConfigError, DataError) is a normal outcome; any other exception aborts, so libFuzzer keeps the
// input as a crash, like a sanitizer report. Run: build-fuzz/fuzz_<name> tests/fuzz/corpus/<name>
// (scripts/fuzz.sh runs them all).
#include <spdlog/spdlog.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "core/runtime/dnnl/engine.h"
#include "tests/fuzz/fuzz_targets.h"

namespace {
const tn::fuzz::FuzzTarget* target = nullptr;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);  // readers' warnings would drown libFuzzer's own lines
  tn::set_num_threads(1);
  target = tn::fuzz::find_fuzz_target(TN_FUZZ_TARGET);
  if (!target) {
    std::fprintf(stderr, "no fuzz target named %s\n", TN_FUZZ_TARGET);
    std::abort();
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto outcome = tn::fuzz::run_fuzz_input(*target, {reinterpret_cast<const char*>(data), size});
  if (outcome.kind == tn::fuzz::FuzzOutcome::Kind::Defect) {
    std::fprintf(stderr, "%s\n", outcome.message.c_str());
    std::abort();
  }
  return 0;
}
