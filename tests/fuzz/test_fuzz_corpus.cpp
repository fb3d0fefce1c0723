// The fuzz targets' seed corpora and kept regressions, replayed in the normal test suite: every
// input of tests/fuzz/corpus/<target>/ and tests/fuzz/regressions/<target>/ must parse or be
// refused with a ConfigError or DataError (an input that once crashed stays here for good), and
// each target's seeds must reach past the first check (at least one is accepted).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "core/platform/io/atomic_file.h"
#include "tests/fuzz/fuzz_targets.h"
#include "tests/test_paths.h"

namespace fs = std::filesystem;
using tn::fuzz::FuzzOutcome;

namespace {

fs::path fuzz_dir() { return fs::path(tn::test::source_dir()) / "tests" / "fuzz"; }

/// The files of `dir` (none when it does not exist), sorted.
std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("fuzz targets: one seed corpus per target, and no corpus without its target") {
  const auto& targets = tn::fuzz::fuzz_targets();
  std::set<std::string> names;
  for (const auto& target : targets) {
    names.insert(target.name);
    CHECK_MESSAGE(!files_in(fuzz_dir() / "corpus" / target.name).empty(), std::string(target.name), " has no seed corpus");
  }
  CHECK(names.size() == targets.size());
  for (const char* kind : {"corpus", "regressions"}) {
    std::error_code ec;
    if (!fs::is_directory(fuzz_dir() / kind, ec)) continue;
    for (const auto& entry : fs::directory_iterator(fuzz_dir() / kind))
      CHECK_MESSAGE(names.count(entry.path().filename().string()) == 1, entry.path().string(),
                    " names no fuzz target (tests/fuzz/fuzz_targets.cpp)");
  }
}

TEST_CASE("fuzz corpora: every seed and every kept crash input parses or is refused cleanly") {
  for (const auto& target : tn::fuzz::fuzz_targets()) {
    int accepted = 0;
    for (const char* kind : {"corpus", "regressions"}) {
      for (const fs::path& file : files_in(fuzz_dir() / kind / target.name)) {
        const FuzzOutcome outcome = tn::fuzz::run_fuzz_input(target, tn::read_file(file.string()));
        CHECK_MESSAGE(outcome.kind != FuzzOutcome::Kind::Defect, file.string(), ": ", outcome.message);
        if (std::string(kind) == "corpus" && outcome.kind == FuzzOutcome::Kind::Accepted) ++accepted;
      }
    }
    CHECK_MESSAGE(accepted >= 1, std::string(target.name), ": no seed is accepted, so fuzzing would not get past the first check");
  }
}

TEST_CASE("fuzz targets: malformed input is refused, not accepted") {
  // A hand-picked bad input per kind of parser: the harness must report the refusal.
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"spec", "model: [1, 2"},
      {"override", "model.d_model=banana"},
      {"safetensors", std::string("\x10\0\0\0\0\0\0\0{}", 10)},  // header length beyond the file
      {"listops", "Source\tTarget\n( [MAX 2 9 )\t9\n"},
      {"cifar10", std::string(3072, '\0')},
      {"tokenize_decode", "1 2 x\n"},
      {"forward_input", "{\"task\": \"lm\""},
  };
  for (const auto& entry : bad) {
    const std::string& name = entry.first;  // not a structured binding: clang 14 cannot capture it
    const std::string& bytes = entry.second;
    const auto* target = tn::fuzz::find_fuzz_target(name);
    REQUIRE(target);
    const FuzzOutcome outcome = tn::fuzz::run_fuzz_input(*target, bytes);
    CHECK_MESSAGE(outcome.kind == FuzzOutcome::Kind::Refused, name, ": ", outcome.message);
  }
}
