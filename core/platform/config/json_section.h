#pragma once
// The checked JSON reader of every config section (model:, data:, train:, a reader's options):
// typed reads with defaults, range checks and unknown-key detection, each failure a ConfigIssue
// naming the full key path and the fix. No YAML and no file locations here: experiments/spec
// converts YAML to JSON and adds file:line to the issues; checkpoints add their path.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"

namespace tn {

/// One bad value in a config, in parts: `key` is the full dotted path
/// ("model.attention.diag.block_size", "model.layers[2]"), `problem` says what is wrong and
/// `fix` how to fix it. what() is "key: problem; fix". `related` lists other full paths the
/// problem involves (model.n_heads for a divisibility error), so a caller that knows where keys
/// were written (experiments/spec/spec: file:line) can point at one of them when `key` itself was
/// left to its default. Thrown by JsonSection and resolve_model_json; callers normally add a
/// location and rethrow a plain ConfigError.
struct ConfigIssue : ConfigError {
  ConfigIssue(std::string key, std::string problem, std::string fix, std::vector<std::string> related = {});
  std::string key;
  std::string problem;
  std::string fix;
  std::vector<std::string> related;
};

/// The entry of `known` that `key` most likely misspells, or "" when none is close: candidates
/// within max(2, key.size() / 3) edits (optimal string alignment: insertions, deletions,
/// substitutions, adjacent transpositions), or sharing a prefix of >= 3 characters that covers
/// all but at most one character of the shorter spelling ("srms" -> "srmsnorm"). The longest
/// common prefix wins, then the fewest edits.
std::string nearest_key(const std::string& key, const std::vector<std::string>& known);

/// How a JSON value reads in an error message: its JSON text ("abc" quoted, 5, null, [0.9]);
/// long lists and mappings as "a list of N entries", "a mapping".
std::string describe_json(const nlohmann::json& value);

/// Typed, checked reads from one JSON object (a section of a config). Every failure throws
/// ConfigIssue at the full key path with a fix. A key that is absent takes the fallback; an
/// explicit null is a type error for the typed reads (check has() first where null means
/// "default", as for channel_mixer.d_ff).
/// Numbers given as numeric strings are accepted ("1e-6": PyYAML reads it so, and the reference
/// converts it); integers must be integral ("8" and 8.0 are 8, 8.5 is an error).
class JsonSection {
 public:
  /// `value` must be an object, or null (read as an empty section); otherwise throws ConfigIssue
  /// at `path` ("" for the root of a file).
  JsonSection(const nlohmann::json& value, std::string path);

  const std::string& path() const { return path_; }
  /// Full path of `key` in this section: "model.d_model", or "d_model" at the root.
  std::string key_path(const std::string& key) const;
  /// Every key must be in `known`: strict → ConfigIssue at the first stranger ("unknown key;
  /// did you mean `d_model`?", or the list of valid keys); otherwise a spdlog warning per key.
  void check_keys(const std::vector<std::string>& known, bool strict) const;
  /// The keys present, in the object's order.
  std::vector<std::string> keys() const;
  /// The value under `key`, or nullptr when it is absent (null values are returned: for keys
  /// where the reference gives null a meaning, e.g. `norm: null` is `none`).
  const nlohmann::json* find(const std::string& key) const;
  /// The value under `key`, or nullptr when it is absent or null.
  const nlohmann::json* get(const std::string& key) const;
  bool has(const std::string& key) const { return get(key) != nullptr; }

  int64_t integer(const std::string& key, int64_t fallback) const;
  uint64_t unsigned_integer(const std::string& key, uint64_t fallback) const;
  /// A finite number.
  double number(const std::string& key, double fallback) const;
  bool boolean(const std::string& key, bool fallback) const;
  std::string string(const std::string& key, const std::string& fallback) const;
  /// A name out of `names` (spelling → value); the problem lists the choices, the fix names the
  /// nearest one.
  template <class E>
  E choice(const std::string& key, E fallback, const std::vector<std::pair<std::string, E>>& names) const;
  /// The sub-object under `key` (absent or null: an empty section).
  JsonSection section(const std::string& key) const;

  /// Range checks: each returns `value` or throws ConfigIssue ("must be >= 1, got 0").
  int64_t at_least(const std::string& key, int64_t value, int64_t min, const std::string& fix) const;
  /// "must be <= 1073741824, got 4611686018427387904": the upper bounds of sizes.
  int64_t at_most(const std::string& key, int64_t value, int64_t max, const std::string& fix) const;
  double at_least(const std::string& key, double value, double min, const std::string& fix) const;
  double positive(const std::string& key, double value, const std::string& fix) const;
  double probability(const std::string& key, double value) const;  // in [0, 1)

  /// Throws ConfigIssue at key_path(key); `related` are keys of this section.
  [[noreturn]] void fail(const std::string& key, const std::string& problem, const std::string& fix,
                         const std::vector<std::string>& related = {}) const;

 private:
  [[noreturn]] void fail_choice(const std::string& key, const nlohmann::json& got,
                                const std::vector<std::string>& allowed) const;
  static const nlohmann::json& empty_object();

  const nlohmann::json* value_;
  std::string path_;
};

template <class E>
E JsonSection::choice(const std::string& key, E fallback,
                      const std::vector<std::pair<std::string, E>>& names) const {
  const nlohmann::json* v = find(key);
  if (!v) return fallback;
  std::vector<std::string> allowed;
  for (const auto& [name, value] : names) {
    if (v->is_string() && v->get_ref<const std::string&>() == name) return value;
    allowed.push_back(name);
  }
  fail_choice(key, *v, allowed);
}

}  // namespace tn
