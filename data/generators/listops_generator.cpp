#include "data/generators/listops_generator.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>
#include <string_view>
#include <unordered_set>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "core/platform/io/staged_folder.h"
#include "data/generators/set_folder.h"
#include "core/runtime/rng.h"

namespace tn {
namespace {

namespace fs = std::filesystem;

constexpr double kValueP = 0.25;  // listops.py's VALUE_P: a node is an operator when r <= 0.25
constexpr int kOperators = 4;
// listops.py's OPERATORS, in its order (FIRST and LAST are commented out there).
constexpr std::array<std::string_view, kOperators> kOperatorNames = {"[MIN", "[MAX", "[MED", "[SM"};
enum : uint8_t { kMin = 0, kMax = 1, kMed = 2, kSumMod = 3 };

// A tree in pre-order, one byte per token: a digit 0..9, kEnd for `]`, kFirstOperator + op for
// an operator. Together with the argument counts of its operators (in the same order) this is
// all serialize() needs.
constexpr char kEnd = 10;
constexpr char kFirstOperator = 11;
constexpr char kPendingOperator = 127;  // drawn after the arguments, patched in then

std::string option(const char* name, int64_t value) { return std::string(name) + " " + std::to_string(value); }

/// The longest tree (in tokens) of at most `max_depth` levels with at most `max_args` arguments
/// per operator, saturated at `cap` (no overflow).
int64_t longest_tree(int64_t max_depth, int64_t max_args, int64_t cap) {
  int64_t length = 1;  // a node at max_depth is a digit
  for (int64_t depth = max_depth - 1; depth >= 1 && length < cap; --depth)
    length = length > (cap - 2) / max_args ? cap : 2 + max_args * length;
  return std::min(length, cap);
}

/// The value of an operator over its arguments, as listops.py's to_value.
uint8_t operator_value(int op, std::vector<uint8_t>::iterator first, std::vector<uint8_t>::iterator last) {
  switch (op) {
    case kMin: return *std::min_element(first, last);
    case kMax: return *std::max_element(first, last);
    case kMed: {  // int(np.median(args)): the floor of the two middle values' mean for an even count
      std::sort(first, last);
      const auto n = last - first;
      return n % 2 ? first[n / 2] : static_cast<uint8_t>((first[n / 2 - 1] + first[n / 2]) / 2);
    }
    default: {  // kSumMod: np.sum(args) % 10
      int sum = 0;
      for (auto it = first; it != last; ++it) sum += *it;
      return static_cast<uint8_t>(sum % 10);
    }
  }
}

/// Samples trees one at a time with reusable buffers; an explicit stack instead of recursion, so
/// a deep max_depth cannot overflow the call stack.
class TreeSampler {
 public:
  explicit TreeSampler(const ListOpsOptions& options) : options_(options), rng_(options.seed) {}

  /// Samples one tree (the draws of generate_listops' comment). Returns false when it was
  /// abandoned on reaching max_length tokens; otherwise tokens(), arity() and value() describe it.
  bool sample() {
    tokens_.clear();
    arity_.clear();
    frames_.clear();
    values_.clear();
    while (true) {
      const auto depth = static_cast<int64_t>(frames_.size()) + 1;
      const double r = depth < options_.max_depth ? rng_.uniform() : 1.0;
      const bool leaf = r > kValueP;
      if (leaf) {
        const auto digit = static_cast<uint8_t>(rng_.next_u64() % 10);
        tokens_.push_back(static_cast<char>(digit));
        values_.push_back(digit);
      } else {
        const auto args = 2 + static_cast<int64_t>(rng_.next_u64() % static_cast<uint64_t>(options_.max_args - 1));
        frames_.push_back({tokens_.size(), args, values_.size()});
        tokens_.push_back(kPendingOperator);
        arity_.push_back(args);
      }
      // Every open operator still owes its `]`: the tree has at least this many tokens.
      if (static_cast<int64_t>(tokens_.size() + frames_.size()) >= options_.max_length) return false;
      if (!leaf) continue;
      close_finished_operators();
      if (frames_.empty()) return true;
    }
  }

  const std::string& tokens() const { return tokens_; }
  const std::vector<int64_t>& arity() const { return arity_; }
  int value() const { return values_.front(); }

 private:
  struct Frame {
    size_t op_token;      // where the operator's token goes
    int64_t remaining;    // arguments still to sample
    size_t values_begin;  // where its arguments' values start in values_
  };

  /// A subtree was just completed: counts it as an argument of the open operator, and completes
  /// every operator that has all its arguments (drawing its operator, computing its value).
  void close_finished_operators() {
    while (!frames_.empty()) {
      Frame& frame = frames_.back();
      if (--frame.remaining > 0) return;
      const int op = static_cast<int>(rng_.next_u64() % kOperators);
      tokens_[frame.op_token] = static_cast<char>(kFirstOperator + op);
      tokens_.push_back(kEnd);
      const auto first = values_.begin() + static_cast<std::ptrdiff_t>(frame.values_begin);
      const uint8_t value = operator_value(op, first, values_.end());
      values_.resize(frame.values_begin);
      values_.push_back(value);
      frames_.pop_back();
    }
  }

  const ListOpsOptions& options_;
  Rng rng_;
  std::string tokens_;
  std::vector<int64_t> arity_;
  std::vector<Frame> frames_;
  std::vector<uint8_t> values_;  // the values of the completed arguments of the open operators
};

/// listops.py's to_string of the left-deep tuple: an operator with k arguments opens k + 1
/// parentheses, each argument is followed by " )", and `]` by " )".
std::string serialize(const std::string& tokens, const std::vector<int64_t>& arity) {
  std::string out;
  out.reserve(tokens.size() * 7);
  std::vector<int64_t> open;  // arguments still to come, per open operator
  size_t next_arity = 0;
  for (const char token : tokens) {
    if (token == kEnd) {
      out += " ] )";
      open.pop_back();
    } else {
      if (!open.empty()) out += ' ';
      if (token < kEnd) {
        out += static_cast<char>('0' + token);
      } else {
        const int64_t args = arity[next_arity++];
        for (int64_t k = 0; k <= args; ++k) out += "( ";
        out += kOperatorNames[static_cast<size_t>(token - kFirstOperator)];
        open.push_back(args);
        continue;  // its arguments follow
      }
    }
    if (!open.empty()) {  // a leaf or an operator was completed: one argument of the open one
      out += " )";
      --open.back();
    }
  }
  return out;
}

/// The guard against a window that (almost) no tree reaches, or that holds fewer distinct trees
/// than asked for.
[[noreturn]] void throw_stalled(const ListOpsOptions& o, const ListOpsData& data, int64_t stalled) {
  const std::string window = "the window " + std::to_string(o.min_length) + " < L < " + std::to_string(o.max_length);
  const std::string shape = option("--max-depth", o.max_depth) + " " + option("--max-args", o.max_args);
  if (data.examples.empty()) {
    const bool mostly_short = data.too_short >= data.too_long;
    throw ConfigError("no tree of " + std::to_string(data.sampled) + " sampled (" + std::to_string(data.too_short) +
                      " too short, " + std::to_string(data.too_long) + " too long) fell in " + window + " with " +
                      shape + ": " +
                      (mostly_short ? "lower --min-length or raise --max-depth / --max-args"
                                    : "raise --max-length or lower --max-depth / --max-args") +
                      " (or widen the window with --min-length / --max-length)");
  }
  throw ConfigError("only " + std::to_string(data.examples.size()) + " distinct trees in " + window + " with " +
                    shape + " after " + std::to_string(data.sampled) + " samples, none new in the last " +
                    std::to_string(stalled) + ": fewer distinct trees than the " +
                    std::to_string(o.total()) +
                    " asked for; widen the window (--min-length, --max-length), raise --max-depth / --max-args, "
                    "or ask for fewer (--train, --valid, --test)");
}

/// Hash and equality of an example's index by its source: a set of indices into the examples
/// deduplicates without a second copy of the sources.
struct SourceOf {
  const std::vector<ListOpsExample>* examples;
  size_t operator()(size_t i) const { return std::hash<std::string_view>()((*examples)[i].source); }
  bool operator()(size_t a, size_t b) const { return (*examples)[a].source == (*examples)[b].source; }
};

/// Logs the progress at most every few seconds.
class GenerationLog {
 public:
  explicit GenerationLog(int64_t total) : total_(total), start_(Clock::now()), last_(start_) {}
  void maybe_log(const ListOpsData& data) {
    const Clock::time_point now = Clock::now();
    if (std::chrono::duration<double>(now - last_).count() < kIntervalS) return;
    last_ = now;
    const auto accepted = static_cast<double>(data.examples.size());
    spdlog::info("listops: {} of {} trees accepted, {} sampled ({:.2f} % accepted), {:.0f} s", data.examples.size(),
                 total_, data.sampled, 100.0 * accepted / static_cast<double>(data.sampled),
                 std::chrono::duration<double>(now - start_).count());
  }

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr double kIntervalS = 5.0;
  int64_t total_;
  Clock::time_point start_, last_;
};

}  // namespace

void ListOpsOptions::validate() const {
  if (max_depth < 1)
    throw ConfigError(option("--max-depth", max_depth) +
                      ": the root is at depth 1, so it needs at least 1 (LRA: 10)");
  if (max_args < 2)
    throw ConfigError(option("--max-args", max_args) +
                      ": an operator takes 2..max-args arguments, so it needs at least 2 (LRA: 10)");
  if (min_length < 0) throw ConfigError(option("--min-length", min_length) + ": a length cannot be negative (LRA: 500)");
  if (min_length >= max_length - 1)
    throw ConfigError(option("--min-length", min_length) + " " + option("--max-length", max_length) +
                      ": a tree is kept when min-length < L < max-length, so no length fits; needs min-length <= "
                      "max-length - 2 (LRA: 500 and 2000)");
  for (const auto& [name, count] : {std::pair{"--train", train}, {"--valid", valid}, {"--test", test}})
    if (count < 0 || count > 100'000'000)
      throw ConfigError(option(name, count) + ": a count of examples must lie in 0..100,000,000 (LRA: 96000, 2000, 2000)");
  if (total() == 0)
    throw ConfigError("--train 0 --valid 0 --test 0: nothing to generate; ask for at least one example (LRA: 96000, "
                      "2000, 2000)");
  if (const int64_t longest = longest_tree(max_depth, max_args, max_length); longest <= min_length)
    throw ConfigError(option("--min-length", min_length) + ": no tree with " + option("--max-depth", max_depth) + " " +
                      option("--max-args", max_args) + " is that long (the longest has " + std::to_string(longest) +
                      " tokens); raise --max-depth or --max-args, or lower --min-length");
}

ListOpsData generate_listops(const ListOpsOptions& options, int64_t stall_samples) {
  options.validate();
  const int64_t total = options.total();
  ListOpsData data;
  data.examples.reserve(static_cast<size_t>(total));
  std::unordered_set<size_t, SourceOf, SourceOf> seen(static_cast<size_t>(total), SourceOf{&data.examples},
                                                      SourceOf{&data.examples});
  TreeSampler sampler(options);
  GenerationLog log(total);
  int64_t since_new = 0;  // samples since the last new accepted tree
  while (static_cast<int64_t>(data.examples.size()) < total) {
    ++data.sampled;
    ++since_new;
    if (!sampler.sample()) {
      ++data.too_long;
    } else if (static_cast<int64_t>(sampler.tokens().size()) <= options.min_length) {
      ++data.too_short;
    } else {
      // The official code keeps a Python set and splits in its hash order; here the splits take
      // the trees in the order they were generated (a set's order is no better a shuffle).
      data.examples.push_back({serialize(sampler.tokens(), sampler.arity()), sampler.value(),
                               static_cast<int64_t>(sampler.tokens().size())});
      if (seen.insert(data.examples.size() - 1).second) {
        since_new = 0;
      } else {
        data.examples.pop_back();
        ++data.duplicates;
      }
    }
    if (since_new >= stall_samples) throw_stalled(options, data, since_new);
    if ((data.sampled & 0xFFF) == 0) log.maybe_log(data);
  }
  return data;
}

std::vector<std::string> listops_files(const std::string& dir) {
  std::vector<std::string> files;
  for (const char* name : {"basic_train.tsv", "basic_val.tsv", "basic_test.tsv"})
    files.push_back((fs::path(dir) / name).string());
  return files;
}

void check_listops_output(const std::string& dir, bool overwrite) {
  check_set_folder(dir, {"basic_train.tsv", "basic_val.tsv", "basic_test.tsv"}, overwrite, "ListOps");
}

std::vector<std::string> write_listops(const std::string& dir, const ListOpsOptions& options,
                                       const ListOpsData& data, bool overwrite) {
  if (static_cast<int64_t>(data.examples.size()) != options.total())
    throw ShapeError("write_listops: " + std::to_string(data.examples.size()) + " examples for " +
                     std::to_string(options.total()) + " (train + valid + test)");
  check_listops_output(dir, overwrite);
  // The three splits are written into a staging folder beside `dir`, which then takes its place in
  // one rename: a kill at any moment leaves the old splits whole or the new ones, never a mix.
  StagedFolder staged(dir);
  const std::vector<std::string> files = listops_files(staged.path());
  const std::array<int64_t, 3> counts = {options.train, options.valid, options.test};
  auto example = data.examples.begin();
  for (size_t split = 0; split < files.size(); ++split) {
    const auto end = example + static_cast<std::ptrdiff_t>(counts[split]);
    size_t bytes = 16;
    for (auto it = example; it != end; ++it) bytes += it->source.size() + 4;
    std::string text;
    text.reserve(bytes);
    text += "Source\tTarget\n";
    for (; example != end; ++example) {
      text += example->source;
      text += '\t';
      text += static_cast<char>('0' + example->target);
      text += '\n';
    }
    write_own_file(files[split], text, "data generate");
  }
  staged.commit();
  return listops_files(dir);
}

}  // namespace tn
