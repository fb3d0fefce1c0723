#include "core/platform/config/json_section.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

namespace tn {

using nlohmann::json;

namespace {
std::string join(const std::vector<std::string>& items, const std::string& sep = ", ") {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Optimal string alignment distance (Levenshtein plus adjacent transpositions).
size_t edit_distance(const std::string& a, const std::string& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

// A numeric string as the reference's float()/int() would read it; nullopt-like via bool.
bool parse_double(const std::string& text, double& out) {
  std::string s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t start = 0;
  while (start < s.size() && std::isspace(static_cast<unsigned char>(s[start]))) ++start;
  if (start < s.size() && s[start] == '+') ++start;
  if (start >= s.size()) return false;
  const char* first = s.data() + start;
  const char* last = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(first, last, out);
  return ec == std::errc() && ptr == last;
}
}  // namespace

// ---------------------------------------------------------------------------------------------
// ConfigIssue, nearest_key, describe_json
// ---------------------------------------------------------------------------------------------

ConfigIssue::ConfigIssue(std::string key_, std::string problem_, std::string fix_, std::vector<std::string> related_)
    : ConfigError(key_ + ": " + problem_ + (fix_.empty() ? "" : "; " + fix_)),
      key(std::move(key_)),
      problem(std::move(problem_)),
      fix(std::move(fix_)),
      related(std::move(related_)) {}

std::string nearest_key(const std::string& key, const std::vector<std::string>& known) {
  // A candidate qualifies when it is a few edits away, or when one spelling is (nearly) a prefix
  // of the other ("srms" -> "srmsnorm", "scale" -> "scaling"). Among the qualified ones the
  // longest common prefix wins, then the smaller distance, then the earlier entry.
  const std::string k = lower(key);
  std::string best;
  size_t best_prefix = 0, best_distance = 0;
  for (const std::string& candidate : known) {
    const std::string c = lower(candidate);
    const size_t distance = edit_distance(k, c);
    size_t prefix = 0;
    while (prefix < k.size() && prefix < c.size() && k[prefix] == c[prefix]) ++prefix;
    const size_t shorter = std::min(k.size(), c.size());
    const bool close = distance <= std::max<size_t>(2, k.size() / 3) && distance < std::max(k.size(), c.size());
    const bool prefixed = prefix >= 3 && prefix + 1 >= shorter;
    if (!close && !prefixed) continue;
    if (best.empty() || prefix > best_prefix || (prefix == best_prefix && distance < best_distance))
      best = candidate, best_prefix = prefix, best_distance = distance;
  }
  return best;
}

std::string describe_json(const json& value) {
  if (value.is_number_float() && !std::isfinite(value.get<double>()))  // dump() would say null
    return std::isnan(value.get<double>()) ? "nan" : value.get<double>() > 0 ? "inf" : "-inf";
  const std::string text = value.dump();
  if (value.is_structured() && text.size() > 40)
    return value.is_object() ? "a mapping" : "a list of " + std::to_string(value.size()) + " entries";
  if (text.size() > 80) {  // a long string: its start, cut at a character boundary, and its size
    size_t cut = 60;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    return text.substr(0, cut) + "...\" (a string of " + std::to_string(value.get_ref<const std::string&>().size()) +
           " bytes)";
  }
  return text;
}

// ---------------------------------------------------------------------------------------------
// JsonSection
// ---------------------------------------------------------------------------------------------

const json& JsonSection::empty_object() {
  static const json empty = json::object();
  return empty;
}

JsonSection::JsonSection(const json& value, std::string path) : value_(&value), path_(std::move(path)) {
  if (value.is_null()) {
    value_ = &empty_object();
  } else if (!value.is_object()) {
    throw ConfigIssue(path_.empty() ? "(top level)" : path_, "expected a mapping, got " + describe_json(value),
                      "write it as `key: value` lines indented below it, or {key: value, ...}");
  }
}

std::string JsonSection::key_path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

void JsonSection::fail(const std::string& key, const std::string& problem, const std::string& fix,
                       const std::vector<std::string>& related) const {
  std::vector<std::string> full;
  for (const std::string& r : related) full.push_back(key_path(r));
  throw ConfigIssue(key_path(key), problem, fix, std::move(full));
}

void JsonSection::fail_choice(const std::string& key, const json& got, const std::vector<std::string>& allowed) const {
  const std::string near = got.is_string() ? nearest_key(got.get<std::string>(), allowed) : "";
  fail(key, "expected one of " + join(allowed) + ", got " + describe_json(got),
       near.empty() ? "use one of those names" : "did you mean `" + near + "`?");
}

void JsonSection::check_keys(const std::vector<std::string>& known, bool strict) const {
  for (const auto& item : value_->items()) {
    if (std::find(known.begin(), known.end(), item.key()) != known.end()) continue;
    if (!strict) {
      spdlog::warn("{}: not a key this implementation knows; ignored", key_path(item.key()));
      continue;
    }
    const std::string near = nearest_key(item.key(), known);
    fail(item.key(), "unknown key",
         !near.empty()      ? "did you mean `" + near + "`?"
         : known.empty()    ? "this section takes no keys; remove it"
                            : "valid keys here: " + join(known));
  }
}

std::vector<std::string> JsonSection::keys() const {
  std::vector<std::string> out;
  for (const auto& item : value_->items()) out.push_back(item.key());
  return out;
}

const json* JsonSection::find(const std::string& key) const {
  auto it = value_->find(key);
  return it == value_->end() ? nullptr : &*it;
}

const json* JsonSection::get(const std::string& key) const {
  const json* v = find(key);
  return v && !v->is_null() ? v : nullptr;
}

int64_t JsonSection::integer(const std::string& key, int64_t fallback) const {
  const json* v = find(key);
  if (!v) return fallback;
  const std::string fix = "write a whole number, e.g. " + key + ": 8";
  if (v->is_number_integer() && !v->is_number_unsigned()) return v->get<int64_t>();
  if (v->is_number_unsigned()) {
    if (v->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      fail(key, "expected an integer below 2^63, got " + describe_json(*v), fix);
    return v->get<int64_t>();
  }
  double d = 0;
  bool numeric = v->is_number_float();
  if (numeric) d = v->get<double>();
  if (v->is_string()) {
    const std::string& s = v->get_ref<const std::string&>();
    int64_t parsed = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), parsed);
    if (ec == std::errc() && ptr == s.data() + s.size() && !s.empty()) return parsed;
    numeric = parse_double(s, d);
  }
  if (numeric && std::isfinite(d) && std::floor(d) == d && std::abs(d) < 9.2e18) return static_cast<int64_t>(d);
  fail(key, "expected an integer, got " + describe_json(*v), fix);
}

uint64_t JsonSection::unsigned_integer(const std::string& key, uint64_t fallback) const {
  const json* v = find(key);
  if (!v) return fallback;
  if (v->is_number_unsigned()) return v->get<uint64_t>();
  const int64_t i = integer(key, 0);
  if (i < 0) fail(key, "expected a non-negative integer, got " + describe_json(*v), "drop the minus sign");
  return static_cast<uint64_t>(i);
}

double JsonSection::number(const std::string& key, double fallback) const {
  const json* v = find(key);
  if (!v) return fallback;
  double d = 0;
  bool numeric = v->is_number();
  if (numeric) d = v->get<double>();
  if (v->is_string()) numeric = parse_double(v->get_ref<const std::string&>(), d);
  if (numeric && std::isfinite(d)) return d;
  fail(key, "expected a number, got " + describe_json(*v), "write a number such as 0.1 or 1e-3");
}

bool JsonSection::boolean(const std::string& key, bool fallback) const {
  const json* v = find(key);
  if (!v) return fallback;
  if (v->is_boolean()) return v->get<bool>();
  fail(key, "expected true or false, got " + describe_json(*v), "write true or false");
}

std::string JsonSection::string(const std::string& key, const std::string& fallback) const {
  const json* v = find(key);
  if (!v) return fallback;
  if (v->is_string()) return v->get<std::string>();
  fail(key, "expected a string, got " + describe_json(*v), "write text, quoted if it looks like a number");
}

JsonSection JsonSection::section(const std::string& key) const {
  const json* v = find(key);
  return JsonSection(v ? *v : empty_object(), key_path(key));
}

int64_t JsonSection::at_least(const std::string& key, int64_t value, int64_t min, const std::string& fix) const {
  if (value < min) fail(key, "must be >= " + std::to_string(min) + ", got " + std::to_string(value), fix);
  return value;
}

int64_t JsonSection::at_most(const std::string& key, int64_t value, int64_t max, const std::string& fix) const {
  if (value > max) fail(key, "must be <= " + std::to_string(max) + ", got " + std::to_string(value), fix);
  return value;
}

double JsonSection::at_least(const std::string& key, double value, double min, const std::string& fix) const {
  if (value < min) fail(key, "must be >= " + json(min).dump() + ", got " + json(value).dump(), fix);
  return value;
}

double JsonSection::positive(const std::string& key, double value, const std::string& fix) const {
  if (!(value > 0)) fail(key, "must be > 0, got " + json(value).dump(), fix);
  return value;
}

double JsonSection::probability(const std::string& key, double value) const {
  if (!(value >= 0 && value < 1))
    fail(key, "must lie in [0, 1), got " + json(value).dump(), "use a probability such as 0.1 (0 disables it)");
  return value;
}

}  // namespace tn
