#include "data/generators/aan_generator.h"

#include <array>
#include <filesystem>
#include <string_view>
#include <utility>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "core/platform/io/staged_folder.h"
#include "core/runtime/rng.h"
#include "data/generators/set_folder.h"

namespace tn {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kAanAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
constexpr int64_t kAanMinWord = 2, kAanMaxWord = 8;
// Keys of the three kinds of stream drawn from the seed, so that they never share draws.
constexpr uint64_t kAanTopicStream = 0x7A0B1C5E3D2F4A69ULL;
constexpr uint64_t kAanLabelStream = 0x3C6EF372FE94F82BULL;
constexpr uint64_t kAanPairStream = 0xA54FF53A5F1D36F1ULL;

std::string aan_option(const char* name, int64_t value) { return std::string(name) + " " + std::to_string(value); }

/// A uniform draw in [0, n) (a modulo of a 64-bit draw: its bias is below 2^-50 here).
int64_t aan_below(Rng& rng, int64_t n) { return static_cast<int64_t>(rng.next_u64() % static_cast<uint64_t>(n)); }

/// Each topic's characters: a uniform subset of topic_chars of the alphabet (a partial
/// Fisher-Yates shuffle), in the order drawn.
std::vector<std::string> draw_aan_topics(const AanOptions& o) {
  Rng rng(splitmix64_mix(o.seed ^ kAanTopicStream));
  std::vector<std::string> topics;
  for (int64_t t = 0; t < o.topics; ++t) {
    std::string chars(kAanAlphabet);
    const auto n = static_cast<int64_t>(chars.size());
    for (int64_t k = 0; k < o.topic_chars; ++k)
      std::swap(chars[static_cast<size_t>(k)], chars[static_cast<size_t>(k + aan_below(rng, n - k))]);
    topics.push_back(chars.substr(0, static_cast<size_t>(o.topic_chars)));
  }
  return topics;
}

/// The labels of one split of n pairs: n / 2 ones, the rest zeros, shuffled from the seed.
std::vector<int> aan_split_labels(const AanOptions& o, int64_t n, uint64_t split) {
  std::vector<int> labels(static_cast<size_t>(n), 0);
  for (int64_t i = 0; i < n / 2; ++i) labels[static_cast<size_t>(i)] = 1;
  Rng rng(splitmix64_mix(o.seed ^ kAanLabelStream) + split);
  for (int64_t i = n - 1; i > 0; --i)
    std::swap(labels[static_cast<size_t>(i)], labels[static_cast<size_t>(aan_below(rng, i + 1))]);
  return labels;
}

/// One document: words of kAanMinWord..kAanMaxWord characters with one space between them, each
/// character from the topic with probability topic_share, else from the whole alphabet.
std::string aan_document(Rng& rng, const std::string& topic, const AanOptions& o) {
  const int64_t length = o.min_length + aan_below(rng, o.max_length - o.min_length + 1);
  std::string text;
  text.reserve(static_cast<size_t>(length));
  auto draw = [&]() {
    const bool from_topic = rng.uniform() < o.topic_share;
    return from_topic ? topic[static_cast<size_t>(aan_below(rng, static_cast<int64_t>(topic.size())))]
                      : kAanAlphabet[static_cast<size_t>(aan_below(rng, static_cast<int64_t>(kAanAlphabet.size())))];
  };
  int64_t word = 0, word_length = kAanMinWord + aan_below(rng, kAanMaxWord - kAanMinWord + 1);
  while (static_cast<int64_t>(text.size()) < length) {
    // A space only between two characters: never first, last, or twice in a row.
    if (word == word_length && static_cast<int64_t>(text.size()) + 1 < length) {
      text += ' ';
      word = 0;
      word_length = kAanMinWord + aan_below(rng, kAanMaxWord - kAanMinWord + 1);
      continue;
    }
    text += draw();
    ++word;
  }
  return text;
}

/// Pair `index` with its label, from its own stream.
AanPair make_aan_pair(const AanOptions& o, const std::vector<std::string>& topics, int64_t index, int label) {
  Rng rng(splitmix64_mix(o.seed ^ kAanPairStream) + 0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(index));
  AanPair pair;
  pair.label = label;
  pair.id1 = "syn-" + std::to_string(index) + "-1";
  pair.id2 = "syn-" + std::to_string(index) + "-2";
  pair.topic1 = static_cast<int>(aan_below(rng, o.topics));
  pair.topic2 = pair.topic1;
  if (label == 0) {  // uniform over the other topics
    pair.topic2 = static_cast<int>(aan_below(rng, o.topics - 1));
    if (pair.topic2 >= pair.topic1) ++pair.topic2;
  }
  pair.text1 = aan_document(rng, topics[static_cast<size_t>(pair.topic1)], o);
  pair.text2 = aan_document(rng, topics[static_cast<size_t>(pair.topic2)], o);
  return pair;
}

}  // namespace

void AanOptions::validate() const {
  if (count < 20 || count > 1'000'000)
    throw ConfigError(aan_option("--count", count) +
                      ": the pairs over the three files must number 20..1,000,000 (eval and test get a tenth each, "
                      "and each split needs both labels); e.g. --count 2000");
  if (topics < 2) throw ConfigError(aan_option("topics", topics) + ": a label-0 pair needs two topics, so at least 2");
  if (topic_chars < 1 || topic_chars > static_cast<int64_t>(kAanAlphabet.size()))
    throw ConfigError(aan_option("topic_chars", topic_chars) + ": a topic takes 1..36 of the characters a-z, 0-9");
  if (!(topic_share >= 0.0 && topic_share <= 1.0))
    throw ConfigError("topic_share " + std::to_string(topic_share) + ": a probability, so 0..1");
  if (min_length < 1 || min_length > max_length || max_length > 100'000)
    throw ConfigError(aan_option("min_length", min_length) + " " + aan_option("max_length", max_length) +
                      ": a document has 1 <= min_length <= max_length <= 100,000 characters");
}

AanData generate_aan(const AanOptions& options) {
  options.validate();
  AanData data;
  data.topics = draw_aan_topics(options);
  data.pairs.reserve(static_cast<size_t>(options.count));
  const std::array<int64_t, 3> counts = {options.train_count(), options.eval_count(), options.test_count()};
  int64_t index = 0;
  for (size_t split = 0; split < counts.size(); ++split)
    for (const int label : aan_split_labels(options, counts[split], split))
      data.pairs.push_back(make_aan_pair(options, data.topics, index++, label));
  return data;
}

std::vector<std::string> aan_files(const std::string& dir) {
  std::vector<std::string> files;
  for (const char* name : {"new_aan_pairs.train.tsv", "new_aan_pairs.eval.tsv", "new_aan_pairs.test.tsv"})
    files.push_back((fs::path(dir) / name).string());
  return files;
}

void check_aan_output(const std::string& dir, bool overwrite) {
  std::vector<std::string> names;
  for (const std::string& file : aan_files(""))  // the names alone
    names.push_back(fs::path(file).filename().string());
  check_set_folder(dir, names, overwrite, "AAN");
}

std::vector<std::string> write_aan(const std::string& dir, const AanOptions& options, const AanData& data,
                                   bool overwrite) {
  if (static_cast<int64_t>(data.pairs.size()) != options.count)
    throw ShapeError("write_aan: " + std::to_string(data.pairs.size()) + " pairs for --count " +
                     std::to_string(options.count));
  check_aan_output(dir, overwrite);
  // The three splits go into a staging folder beside `dir`, which then takes its place in one
  // rename: a kill at any moment leaves the old splits whole or the new ones, never a mix.
  StagedFolder staged(dir);
  const std::vector<std::string> files = aan_files(staged.path());
  const std::array<int64_t, 3> counts = {options.train_count(), options.eval_count(), options.test_count()};
  auto pair = data.pairs.begin();
  for (size_t split = 0; split < files.size(); ++split) {
    std::string text;
    for (const auto end = pair + static_cast<std::ptrdiff_t>(counts[split]); pair != end; ++pair) {
      text += static_cast<char>('0' + pair->label);
      for (const std::string* field : {&pair->id1, &pair->id2, &pair->text1, &pair->text2}) {
        text += '\t';
        text += *field;
      }
      text += '\n';
    }
    write_own_file(files[split], text, "data generate");
  }
  staged.commit();
  return aan_files(dir);
}

}  // namespace tn
