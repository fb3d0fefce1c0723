#pragma once
// The Long Range Arena ListOps generator: nested MIN/MAX/MED/SM expressions over the digits 0..9,
// each labelled with its value (0..9). It follows the LRA paper (Tay et al. 2021, "Long Range
// Arena: A Benchmark for Efficient Transformers") and the official generator,
// google-research/long-range-arena lra_benchmarks/data/listops.py, in the trees it samples, the
// window of lengths it keeps, the serialization and the three .tsv files it writes. What differs:
// the random numbers (tn::Rng, not Python's `random`), the split order (generation order, not
// Python's set order) and the early abort of trees that outgrow the window (see
// generate_listops).
#include <cstdint>
#include <string>
#include <vector>

namespace tn {

/// What `transnormer data generate listops` takes; the defaults are the official ones (LRA's
/// `basic` task). A tree is kept when min_length < L < max_length, L being its token count
/// without parentheses (operators, digits and `]`).
struct ListOpsOptions {
  int64_t max_depth = 10;     // the root is at depth 1; a node at max_depth is always a digit
  int64_t max_args = 10;      // an operator takes 2..max_args arguments, uniformly
  int64_t min_length = 500;   // exclusive lower bound of L
  int64_t max_length = 2000;  // exclusive upper bound of L
  int64_t train = 96000, valid = 2000, test = 2000;  // examples per split
  uint64_t seed = 0;          // seeds the one tn::Rng all draws come from

  /// Throws ConfigError naming the option (as `--max-args 1: ...`) and the fix when a value is
  /// impossible: max_depth < 1, max_args < 2, min_length < 0, min_length >= max_length - 1 (no
  /// integer strictly inside), a negative count or all three counts 0, or a window no tree can
  /// reach (every tree of this depth and width has L <= min_length).
  void validate() const;

  /// train + valid + test.
  int64_t total() const { return train + valid + test; }
};

/// One example: the serialized expression, its value and its length.
struct ListOpsExample {
  std::string source;  // as listops.py's to_string: `[MAX 2 9]` is `( ( ( [MAX 2 ) 9 ) ] )`
  int target = 0;      // the value, 0..9
  int64_t length = 0;  // L: tokens without parentheses
};

/// The examples in generation order (train = the first `train`, then valid, then test), and how
/// many trees were sampled to get them.
struct ListOpsData {
  std::vector<ListOpsExample> examples;
  int64_t sampled = 0;     // trees sampled: accepted + too_short + too_long + duplicates
  int64_t too_short = 0;   // L <= min_length
  int64_t too_long = 0;    // abandoned on reaching max_length tokens
  int64_t duplicates = 0;  // inside the window, but the same as an accepted tree
};

/// The stall guard: generate_listops gives up after this many sampled trees in a row without a
/// new accepted tree. At the defaults 8.3 % of the trees are accepted, so a stall this long means
/// that the window holds (almost) no trees, or fewer distinct trees than asked for; a window
/// whose acceptance rate is below about 1e-6 is refused too. 10^7 samples take about 50 s at the
/// defaults (a sample costs at most max_length tokens), far less for narrow or short windows.
inline constexpr int64_t kListOpsStallSamples = 10'000'000;

/// Samples ListOps trees as listops.py does and keeps the distinct ones with a length inside the
/// window until options.total() are kept. Per node at depth d (the root at d = 1), the draws from
/// tn::Rng(options.seed) are, in order:
///   1. r = uniform() in [0, 1) when d < max_depth (no draw at max_depth, where r = 1);
///   2. r > 0.25: a digit, next_u64() % 10 (a leaf, 1 token); otherwise
///      k = 2 + next_u64() % (max_args - 1), then the k children (each with these draws, in
///      order), then the operator, next_u64() % 4 of [MIN, [MAX, [MED, [SM (2 + the children's
///      tokens). (A modulo of a 64-bit draw: its bias is below 2^-59.)
/// A tree is abandoned as soon as its tokens reach max_length, since it would be rejected anyway:
/// this changes the random stream after it, but not the distribution of the accepted trees.
/// Duplicates are dropped (keyed on the serialized source, which is one-to-one with the tree).
/// Values: MIN, MAX; MED = int(np.median), the floor of the mean of the two middle values for an
/// even count; SM = sum % 10. Calls options.validate(). Logs progress (spdlog info) every few
/// seconds on long runs. Throws ConfigError naming the options to change when `stall_samples`
/// trees in a row bring no new tree (tests pass a smaller limit). Memory: the sources, about 6.4
/// bytes per token (0.66 GB for the defaults). Speed: the defaults take about 6 s (1.2 million
/// trees sampled). At the defaults 8.28 % of the trees fall in the window and their mean length
/// is 1035.0: the exact values of listops.py's distribution (a convolution over depths), which
/// generated sets match (8.30 %, 1035.6 for seed 0).
ListOpsData generate_listops(const ListOpsOptions& options, int64_t stall_samples = kListOpsStallSamples);

/// The files of a ListOps folder: `<dir>/basic_train.tsv`, `basic_val.tsv`, `basic_test.tsv`.
std::vector<std::string> listops_files(const std::string& dir);

/// Checks that `dir` can take the three files without destroying data: throws ConfigError when it
/// exists and is not a directory, when it holds anything but the three files (the set replaces the
/// whole folder), when one of them is not a regular file, or when one exists and `overwrite` is
/// false. Creates nothing, so that a caller can check before a long generation.
void check_listops_output(const std::string& dir, bool overwrite);

/// Writes the three splits of `data` (in order: options.train, options.valid, options.test
/// examples) as the folder `dir`, as listops.py writes them: a header `Source\tTarget`, then one
/// `source\ttarget` row per example, '\n' line ends, each text built in memory first (635 MB for
/// the defaults' train file). The files go into a staging folder beside `dir`, which takes dir's
/// place in one rename once all three are written (core/platform/io/staged_folder.h): at any moment, a kill
/// included, `dir` holds the old splits whole or the new ones. Creates dir's parents when missing.
/// Calls check_listops_output first. Throws ConfigError as it does; ShapeError when `data` does
/// not hold options.total() examples; IoError when the folder or a file cannot be written.
/// Returns the three paths.
std::vector<std::string> write_listops(const std::string& dir, const ListOpsOptions& options,
                                       const ListOpsData& data, bool overwrite);

}  // namespace tn
