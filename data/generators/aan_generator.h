#pragma once
// A tiny synthetic stand-in for LRA Retrieval (AAN), in the release's file format, for a first
// look at the task without the 8.23 GB LRA release: pairs of character documents, label 1 when
// both share a hidden topic. Each topic is a random subset of the characters a-z and 0-9; a
// document draws most of its characters from its topic's subset and the rest from all 36, in
// words separated by spaces. A label-1 pair's documents share their topic, a label-0 pair's do
// not; either document alone says nothing about the label (every topic is equally likely in both
// classes), so a model has to compare the two, as in the real task. Not AAN's statistics: use it
// for smoke tests and learnability checks, not for paper numbers.
#include <cstdint>
#include <string>
#include <vector>

namespace tn {

/// What `transnormer data generate aan` takes. The pairs are split 80 / 10 / 10 into the train,
/// eval and test files (eval and test: count / 10 each, the rest train).
struct AanOptions {
  int64_t count = 2000;         // pairs over the three files
  uint64_t seed = 0;            // the topics, the label order and every pair derive from it
  int64_t topics = 16;          // hidden topics
  int64_t topic_chars = 8;      // characters per topic, of the 36 (a-z, 0-9)
  double topic_share = 0.5;     // chance that a character comes from the topic, else from all 36
  int64_t min_length = 200;     // characters per document, inclusive
  int64_t max_length = 500;

  /// Throws ConfigError naming the option (as `--count 5: ...`) and the fix when a value is
  /// impossible: count outside 20..1,000,000 (each split needs both labels), fewer than 2 topics,
  /// topic_chars outside 1..36, topic_share outside [0, 1], min_length < 1 or > max_length, or
  /// max_length over 100,000.
  void validate() const;

  /// Pairs in each file: eval and test count / 10, train the rest.
  int64_t eval_count() const { return count / 10; }
  int64_t test_count() const { return count / 10; }
  int64_t train_count() const { return count - eval_count() - test_count(); }
};

/// One pair as a row of the files writes it.
struct AanPair {
  int label = 0;           // 1 when both documents share their topic
  std::string id1, id2;    // "syn-<index>-1", "syn-<index>-2"
  std::string text1, text2;
  int topic1 = 0, topic2 = 0;  // the hidden topics (for the tests; never written)
};

/// The pairs in file order (train, then eval, then test) and each topic's characters.
struct AanData {
  std::vector<AanPair> pairs;
  std::vector<std::string> topics;
};

/// Generates options.count pairs. Calls options.validate(). Every split holds floor(n / 2) pairs
/// of label 1 and the rest of label 0, in an order shuffled from the seed. Pair i draws from its
/// own tn::Rng keyed on (seed, i): its first topic uniformly, the second equal to it (label 1) or
/// uniform over the others (label 0), then each document's length uniformly in
/// [min_length, max_length] and its words (2 to 8 characters, one space between them). The same
/// seed gives the same pairs on any machine and thread count; another seed other topics and pairs.
AanData generate_aan(const AanOptions& options);

/// The files of an AAN folder, the names the `aan` reader reads by default:
/// `<dir>/new_aan_pairs.train.tsv`, `new_aan_pairs.eval.tsv`, `new_aan_pairs.test.tsv`.
std::vector<std::string> aan_files(const std::string& dir);

/// Checks that `dir` can take the three files without destroying data (data/generators/set_folder.h):
/// throws ConfigError when it exists and is not a directory, when it holds anything but the three
/// files (the set replaces the whole folder), when one of them is not a regular file, or when one
/// exists and `overwrite` is false. Creates nothing, so that a caller can check before the work.
void check_aan_output(const std::string& dir, bool overwrite);

/// Writes the three splits of `data` as the folder `dir` in the release's format: no header, one
/// row per pair, `label<TAB>id1<TAB>id2<TAB>text1<TAB>text2`, label 0 or 1, '\n' line ends. The
/// files go into a staging folder beside `dir`, which takes dir's place in one rename once all three
/// are written (core/platform/io/staged_folder.h): at any moment, a kill included, `dir` holds the old
/// splits whole or the new ones. Creates dir's parents when missing. Calls check_aan_output first
/// and throws ConfigError as it does; ShapeError when `data` does not hold options.count pairs;
/// IoError when the folder or a file cannot be written. Returns the three paths.
std::vector<std::string> write_aan(const std::string& dir, const AanOptions& options, const AanData& data,
                                   bool overwrite);

}  // namespace tn
