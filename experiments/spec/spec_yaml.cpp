#include "experiments/spec/spec_yaml.h"

#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "data/text/utf8.h"

namespace tn {

using nlohmann::json;
using nlohmann::ordered_json;

// ---------------------------------------------------------------------------------------------
// Where each key was written
// ---------------------------------------------------------------------------------------------

void KeyLocations::set_line(const std::string& key, int zero_based_line) {
  at_[key] = {file_ + ":" + std::to_string(zero_based_line + 1), false};
}

void KeyLocations::add_key(const std::string& mapping, const std::string& key) { order_[mapping].push_back(key); }

std::vector<std::string> KeyLocations::keys_in_order(const std::string& mapping) const {
  auto it = order_.find(mapping);
  return it == order_.end() ? std::vector<std::string>{} : it->second;
}

void KeyLocations::set_override(const std::string& key, const std::string& text) { at_[key] = {text, true}; }

void KeyLocations::overlay(const KeyLocations& other) {
  file_ = other.file_;
  for (const auto& [key, location] : other.at_) at_[key] = location;
  for (const auto& [mapping, keys] : other.order_)
    for (const std::string& key : keys)
      if (std::find(order_[mapping].begin(), order_[mapping].end(), key) == order_[mapping].end())
        order_[mapping].push_back(key);
}

void KeyLocations::erase_under(const std::string& key) {
  for (auto it = at_.begin(); it != at_.end();) {
    const std::string& k = it->first;
    const bool below = k == key || (k.size() > key.size() && k.compare(0, key.size(), key) == 0 &&
                                    (k[key.size()] == '.' || k[key.size()] == '['));
    it = below ? at_.erase(it) : std::next(it);
  }
}

namespace {
std::string parent_key(const std::string& key) {
  const size_t cut = key.find_last_of(".[");
  return cut == std::string::npos ? "" : key.substr(0, cut);
}
}  // namespace

std::string KeyLocations::locate(const ConfigIssue& issue) const {
  std::vector<std::string> keys = {issue.key};
  keys.insert(keys.end(), issue.related.begin(), issue.related.end());
  for (const std::string& k : keys)
    if (auto it = at_.find(k); it != at_.end() && it->second.from_override) return it->second.text;
  // An override below the key (a --set of train.analysis.grad_stats made the unknown train.analysis).
  for (const auto& [k, location] : at_)
    if (location.from_override && k.size() > issue.key.size() && k.compare(0, issue.key.size(), issue.key) == 0 &&
        k[issue.key.size()] == '.')
      return location.text;
  for (const std::string& k : keys)
    if (auto it = at_.find(k); it != at_.end()) return it->second.text;
  for (std::string k = parent_key(issue.key); !k.empty(); k = parent_key(k))
    if (auto it = at_.find(k); it != at_.end()) return it->second.text;
  return file_;
}

namespace {

std::string join_path(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

// ---------------------------------------------------------------------------------------------
// YAML → JSON (YAML 1.2 core schema for plain scalars), recording every key's line.
// ---------------------------------------------------------------------------------------------

json plain_scalar(const std::string& text) {
  static const std::regex kInt("[-+]?[0-9]+");
  static const std::regex kFloat("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") return nullptr;
  const char* first = text.data() + (!text.empty() && text[0] == '+' ? 1 : 0);
  const char* last = text.data() + text.size();
  if (std::regex_match(text, kInt)) {
    int64_t i = 0;
    if (auto [p, ec] = std::from_chars(first, last, i); ec == std::errc() && p == last) return i;
    uint64_t u = 0;
    if (auto [p, ec] = std::from_chars(first, last, u); ec == std::errc() && p == last) return u;
    return text;  // too large: reported by the typed read as "expected an integer, got \"...\""
  }
  if (std::regex_match(text, kFloat)) {
    double d = 0;
    if (auto [p, ec] = std::from_chars(first, last, d); ec == std::errc() && p == last) return d;
    return text;
  }
  if (text == ".inf" || text == ".Inf" || text == ".INF" || text == "+.inf")
    return std::numeric_limits<double>::infinity();
  if (text == "-.inf" || text == "-.Inf" || text == "-.INF") return -std::numeric_limits<double>::infinity();
  if (text == ".nan" || text == ".NaN" || text == ".NAN") return std::numeric_limits<double>::quiet_NaN();
  return text;
}

/// Bounds on what aliases may expand to: a spec nests a few levels and holds a few hundred values.
constexpr int kMaxSpecDepth = 64;
constexpr int64_t kMaxSpecValues = 100000;

/// yaml_to_json with the expansion counted: `depth` levels above node, `values` converted so far.
json to_json_within(const YAML::Node& node, const std::string& path, KeyLocations& where, int depth,
                    int64_t& values) {
  const auto at = [&] {  // file:line: path (shortened), only when refusing
    const std::string shown = path.size() > 60 ? path.substr(0, 60) + "…" : path;
    return where.file() + ":" + std::to_string(node.Mark().line + 1) + ": " + (path.empty() ? "(top level)" : shown);
  };
  if (depth > kMaxSpecDepth)
    throw ConfigError(at() + ": nests more than " + std::to_string(kMaxSpecDepth) +
                      " levels: an alias (*name) refers to a mapping or list that contains it; "
                      "aliases must not be recursive");
  if (++values > kMaxSpecValues)
    throw ConfigError(at() + ": the aliases (*name) expand this spec to more than " + std::to_string(kMaxSpecValues) +
                      " values (a spec holds a few hundred): check the anchors (&name) and aliases");
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null: return nullptr;
    case YAML::NodeType::Scalar: {
      const std::string& tag = node.Tag();
      if (tag == "!" || tag == "tag:yaml.org,2002:str") return node.Scalar();  // quoted or !!str
      return plain_scalar(node.Scalar());
    }
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (size_t i = 0; i < node.size(); ++i) {
        const std::string child = path + "[" + std::to_string(i) + "]";
        if (node[i].Mark().line >= 0) where.set_line(child, node[i].Mark().line);
        out.push_back(to_json_within(node[i], child, where, depth + 1, values));
      }
      return out;
    }
    case YAML::NodeType::Map: {
      json out = json::object();
      std::map<std::string, int> first_line;
      for (auto it = node.begin(); it != node.end(); ++it) {
        const int line = it->first.Mark().line;
        if (!it->first.IsScalar())
          throw ConfigError(where.file() + ":" + std::to_string(line + 1) + ": " + (path.empty() ? "(top level)" : path) +
                            ": a key must be a plain name; write `name: value`");
        const std::string key = it->first.Scalar();
        const std::string child = join_path(path, key);
        if (auto seen = first_line.find(key); seen != first_line.end())
          throw ConfigError(where.file() + ":" + std::to_string(line + 1) + ": " + child + ": duplicate key (first on line " +
                            std::to_string(seen->second + 1) + "); keep only one of them");
        first_line[key] = line;
        where.set_line(child, line);
        where.add_key(path, key);
        out[key] = to_json_within(it->second, child, where, depth + 1, values);
      }
      return out;
    }
  }
  return nullptr;
}

json yaml_to_json(const YAML::Node& node, const std::string& path, KeyLocations& where) {
  int64_t values = 0;
  return to_json_within(node, path, where, 0, values);
}

/// Where flow collections ([ ] and { } outside quotes and comments) first nest deeper than
/// `limit`, or npos. yaml-cpp answers a 200,000-deep document with "bad file".
size_t too_deep_at(const std::string& text, int limit) {
  int depth = 0;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote) {
      if (c == '\\' && quote == '"') ++i;
      else if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\n')) {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::string::npos;
}

/// The 1-based line of byte `offset` of `text`, and its column.
std::pair<size_t, size_t> line_and_column(const std::string& text, size_t offset) {
  const size_t newline = offset == 0 ? std::string::npos : text.rfind('\n', offset - 1);
  const auto end = text.begin() + static_cast<std::ptrdiff_t>(offset);
  return {1 + static_cast<size_t>(std::count(text.begin(), end, '\n')),
          offset - (newline == std::string::npos ? 0 : newline + 1) + 1};
}

/// The 1-based line where a second YAML document starts (a `---` marker after content, or content
/// after a `...` end marker; markers stand at column 0 followed by a blank or the line's end), or 0.
size_t second_document_line(const std::string& text) {
  auto marker = [](std::string_view l, const char* m) {
    return l.substr(0, 3) == m && (l.size() == 3 || l[3] == ' ' || l[3] == '\t');
  };
  auto has_content = [](std::string_view l) {  // anything but blanks and a comment
    const size_t at = l.find_first_not_of(" \t");
    return at != std::string_view::npos && l[at] != '#';
  };
  bool content = false, ended = false;
  size_t number = 0;
  for (size_t start = 0; start <= text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    std::string_view l(text.data() + start, end - start);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    ++number;
    start = end + 1;
    if (marker(l, "---")) {
      if (content || ended) return number;
      content = has_content(l.substr(3));
    } else if (marker(l, "...")) {
      ended = content;
    } else if (has_content(l) && l[0] != '%') {  // %YAML / %TAG directives come before a document
      if (ended) return number;
      content = true;
    }
  }
  return 0;
}

YAML::Node parse_yaml(const std::string& text, const std::string& origin) {
  // Every string of a spec ends up in JSON (run.json, sweep.json, reports), which holds UTF-8 only:
  // refuse other bytes here, where the file and line are known.
  if (const size_t bad = invalid_utf8_at(text); bad != std::string::npos) {
    const auto [line, column] = line_and_column(text, bad);
    char where[96];
    std::snprintf(where, sizeof where, ":%zu:%zu: byte 0x%02X is not UTF-8", line, column,
                  static_cast<unsigned>(static_cast<unsigned char>(text[bad])));
    throw ConfigError(origin + where + "; save the file as UTF-8 (names and values may use any Unicode character)");
  }
  // YAML allows no control character but tab and line breaks; a NUL among the first bytes would
  // also make yaml-cpp read the file as UTF-16 or UTF-32 and hand back bytes that are not UTF-8.
  if (const auto bad = std::find_if(text.begin(), text.end(), [](char c) {
        const auto b = static_cast<unsigned char>(c);
        return (b < 0x20 && b != '\t' && b != '\n' && b != '\r') || b == 0x7F;
      });
      bad != text.end()) {
    const auto [line, column] = line_and_column(text, static_cast<size_t>(bad - text.begin()));
    char where[112];
    std::snprintf(where, sizeof where, ":%zu:%zu: control character 0x%02X", line, column,
                  static_cast<unsigned>(static_cast<unsigned char>(*bad)));
    throw ConfigError(origin + where + " is not allowed in YAML; a spec is text: remove it or save the file as UTF-8 text");
  }
  if (const size_t deep = too_deep_at(text, 256); deep != std::string::npos) {
    throw ConfigError(origin + ":" + std::to_string(line_and_column(text, deep).first) + ": lists or mappings nest more than 256 levels deep here; " +
                      "a spec's values nest a few levels at most: check the brackets");
  }
  // yaml-cpp's Load keeps the first document and drops the rest unsaid (and its LoadAll loops
  // forever on some malformed input, e.g. a lone ","): a second document is found in the text.
  if (const size_t line = second_document_line(text))
    throw ConfigError(origin + ":" + std::to_string(line) + ": a second YAML document (a `---` or `...` " +
                      "line after the first); a spec is one document: remove the marker and merge what " +
                      "follows into the first, or put it in its own file");
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(origin + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                      ": malformed YAML: " + e.msg +
                      "; fix the syntax there (indentation, `key: value` pairs, matching brackets and quotes)");
  }
}

std::string read_text(const std::string& path) {
  // A spec is text of a few KB: 16 MiB bounds /dev/zero, a FIFO that never ends, or a stray file.
  constexpr uint64_t kMaxSpecBytes = uint64_t{16} << 20;
  // A pipe (`train <(cat spec.yaml)`, /dev/stdin) can be read once: its text is kept for the
  // spec's later reads (its top-level keys, then the document).
  static std::mutex pipes_mutex;
  static std::map<std::string, std::string> pipes;
  std::error_code ignored;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode)) {
    const std::lock_guard<std::mutex> lock(pipes_mutex);
    if (auto it = pipes.find(path); it != pipes.end()) return it->second;
    try {
      return pipes[path] = read_file(path, kMaxSpecBytes, "a YAML spec");
    } catch (const DataError& e) {
      throw ConfigError(e.what());
    }
  }
  if (std::filesystem::is_directory(path, ignored))
    throw ConfigError(path + ": is a directory, not a spec file; give the YAML file, e.g. configs/quickstart.yaml");
  if (::access(path.c_str(), R_OK) != 0)
    throw ConfigError(path + ": cannot read the spec file (" + std::strerror(errno) +
                      "); check the path, e.g. configs/quickstart.yaml");
  try {
    return read_file(path, kMaxSpecBytes, "a YAML spec");
  } catch (const DataError& e) {
    throw ConfigError(e.what());  // exit 2: the spec is bad input
  }
}


// ---------------------------------------------------------------------------------------------
// YAML output
// ---------------------------------------------------------------------------------------------

/// A string that reads back as itself when written plain; otherwise JSON-quoted (a valid YAML
/// double-quoted scalar).
std::string yaml_string(const std::string& s) {
  static const std::regex kSafe("[A-Za-z0-9_/.][A-Za-z0-9_+\\-./]*");
  if (std::regex_match(s, kSafe) && plain_scalar(s).is_string()) return s;
  return json(s).dump();
}

std::string yaml_scalar(const ordered_json& v) {
  if (v.is_string()) return yaml_string(v.get<std::string>());
  return v.dump();  // null, true/false, integers, doubles in shortest round-trip form ("1e-07", "0.1", "1.0")
}

bool all_scalars(const ordered_json& v) {
  for (const auto& item : v)
    if (item.is_structured()) return false;
  return true;
}

/// Flow style for lists and mappings of scalars ({kernel: elu, norm: srmsnorm}), block style else.
std::string yaml_flow(const ordered_json& v) {
  std::string out = v.is_array() ? "[" : "{";
  bool first = true;
  for (const auto& item : v.items()) {
    out += first ? "" : ", ";
    first = false;
    if (v.is_object()) out += yaml_string(item.key()) + ": ";
    out += yaml_scalar(item.value());
  }
  return out + (v.is_array() ? "]" : "}");
}

void emit_mapping(const ordered_json& v, int indent, std::string& out) {
  for (const auto& item : v.items()) {
    out += std::string(static_cast<size_t>(indent), ' ') + yaml_string(item.key()) + ":";
    const ordered_json& value = item.value();
    if (!value.is_structured()) {
      out += " " + yaml_scalar(value) + "\n";
    } else if (indent > 0 && all_scalars(value) && yaml_flow(value).size() <= 80) {
      out += " " + yaml_flow(value) + "\n";
    } else if (value.is_object()) {
      out += "\n";
      emit_mapping(value, indent + 2, out);
    } else {
      out += "\n";
      for (const auto& element : value) {
        out += std::string(static_cast<size_t>(indent + 2), ' ') + "- ";
        out += element.is_structured() ? yaml_flow(element) : yaml_scalar(element);
        out += "\n";
      }
    }
  }
}


}  // namespace

YamlDocument read_yaml_document(const std::string& path, bool bare_model) {
  const YAML::Node node = parse_yaml(read_text(path), path);
  YamlDocument doc{json(nullptr), KeyLocations(path)};
  if (bare_model && !(node.IsMap() && node["model"])) {
    doc.root = json::object();
    doc.root["model"] = yaml_to_json(node, "model", doc.where);
  } else {
    doc.root = yaml_to_json(node, "", doc.where);
  }
  return doc;
}

namespace {

/// True when mapping `top` names another kind than `base` by one of the keys that choose a kind
/// (schedule `name:`, data `reader:`, channel mixer `type:`): the base's other keys belong to
/// its own kind, so `top` replaces it instead of merging into it.
bool switches_kind(const json& base, const json& top) {
  for (const char* key : {"name", "reader", "type"})
    if (top.contains(key) && base.contains(key) && top[key] != base[key]) return true;
  return false;
}

/// Puts `top` over `base` at `path`: mappings merge key by key (unless `top` switches the kind:
/// switches_kind), anything else replaces. A spec's `paper:` replaces its base's whole: published
/// values describe the spec that states them (`paper: {}` or `paper: null` clears them).
void merge_over(json& base, const json& top, const std::string& path, KeyLocations& where) {
  for (const auto& [key, value] : top.items()) {
    const std::string p = join_path(path, key);
    const bool whole = path.empty() && key == "paper";
    if (!whole && value.is_object() && base.contains(key) && base[key].is_object() && !switches_kind(base[key], value)) {
      merge_over(base[key], value, p, where);
    } else {
      where.erase_under(p);
      base[key] = value;
    }
  }
}

/// The first key only a sweep file has (points, grid, zip, seeds), or "" for a spec.
std::string sweep_key_of(const json& root) {
  if (!root.is_object()) return "";
  for (const char* key : {"points", "grid", "zip", "seeds"})
    if (root.contains(key)) return key;
  return "";
}

/// Throws ConfigError when the document at `path` is a sweep file; `used_as` says where a spec was
/// expected ("" for the spec given on the command line, else the base: line that names it).
void refuse_sweep_file(const YamlDocument& doc, const std::string& path, const std::string& used_as) {
  const std::string key = sweep_key_of(doc.root);
  if (key.empty()) return;
  const std::string where = doc.where.locate(ConfigIssue(key, "", ""));
  if (used_as.empty())
    throw ConfigError(where + ": " + key + ": makes " + path +
                      " a sweep file, not an experiment spec; give a spec here (a sweep file runs "
                      "with `transnormer sweep " + path + " --out DIR`)");
  throw ConfigError(used_as + " names a sweep file (" + where + ": " + key +
                    ":), not an experiment spec; a base: is a spec (a sweep's points build on the "
                    "spec named by the sweep file's own base:)");
}

/// The longest chain of base: files a spec may build on (beyond the spec itself).
constexpr size_t kMaxBaseDepth = 32;

YamlDocument compose(const std::string& path, std::vector<std::string>& chain,
                     const std::string& used_as) {
  YamlDocument doc = read_yaml_document(path);
  refuse_sweep_file(doc, path, used_as);
  if (!doc.root.is_object() || !doc.root.contains("base")) return doc;
  const std::string at = doc.where.locate(ConfigIssue("base", "", ""));
  if (!doc.root["base"].is_string())
    throw ConfigError(at + ": base: is " + describe_json(doc.root["base"]) +
                      ", not a file name; give the spec this one builds on, e.g. base: ../quickstart.yaml");
  std::error_code ec;  // a name the system refuses (too long, a loop of links) is no file either
  // A spec that came through a pipe (/dev/fd/63) has no folder: its base is read from the current one.
  const bool piped = std::filesystem::is_fifo(path, ec);
  const std::filesystem::path base =
      (piped ? std::filesystem::path() : std::filesystem::path(path).parent_path()) / doc.root["base"].get<std::string>();
  if (!std::filesystem::is_regular_file(base, ec))
    throw ConfigError(at + ": base: " + base.string().substr(0, 200) + " is not a file" +
                      (ec ? " (" + ec.message() + ")" : "") + "; give its path relative to " +
                      (piped ? "the current folder (the spec came through a pipe)" : path));
  std::string id = std::filesystem::weakly_canonical(base, ec).string();
  if (ec) id = base.lexically_normal().string();
  if (std::find(chain.begin(), chain.end(), id) != chain.end())
    throw ConfigError(at + ": base: " + base.string() + " comes back to a spec already on the way (a cycle of base:)");
  if (chain.size() > kMaxBaseDepth)
    throw ConfigError(at + ": base: " + base.string() + " is spec number " + std::to_string(chain.size() + 1) +
                      " of one chain of base: files, more than " + std::to_string(kMaxBaseDepth + 1) +
                      "; merge some of them into one spec");
  chain.push_back(id);
  YamlDocument out = compose(base.string(), chain, at + ": base: " + base.string());
  doc.root.erase("base");
  if (out.root.is_null()) out.root = json::object();  // an empty base file
  if (!out.root.is_object())
    throw ConfigError(at + ": base: " + base.string() + " holds " + describe_json(out.root) +
                      ", not a spec (a mapping of task:, model:, data:, train:); give a spec file");
  merge_over(out.root, doc.root, "", out.where);
  out.where.overlay(doc.where);
  return out;
}

}  // namespace

YamlDocument read_spec_document(const std::string& path) {
  std::error_code ec;  // a pipe's /dev/fd/63 leads to no path: it is named as given
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(path, ec);
  std::vector<std::string> chain = {ec ? path : canonical.string()};
  return compose(path, chain, "");
}

bool yaml_has_top_level_key(const std::string& path, const std::vector<std::string>& keys) {
  const YAML::Node node = parse_yaml(read_text(path), path);
  if (!node.IsMap()) return false;
  return std::any_of(keys.begin(), keys.end(), [&](const std::string& k) { return static_cast<bool>(node[k]); });
}

/// --set key.path=value: value parsed as YAML; mappings on the way are created.
namespace {
/// The parts of "a.b.c"; empty when a part is empty ("a..b", ".a", "a.").
std::vector<std::string> key_parts(const std::string& key) {
  std::vector<std::string> parts;
  std::stringstream keys(key);
  for (std::string part; std::getline(keys, part, '.');) parts.push_back(part);
  if (key.empty() || key.back() == '.' ||
      std::any_of(parts.begin(), parts.end(), [](const std::string& p) { return p.empty(); }))
    return {};
  return parts;
}
}  // namespace

void apply_override(YamlDocument& spec, const std::string& key, const json& value, const std::string& origin) {
  std::vector<std::string> parts = key_parts(key);
  if (parts.empty()) throw ConfigError(origin + ": `" + key + "` is not a key path; write it as e.g. train.seed");
  // paper.test.accuracy names one published value, written `paper: {test.accuracy: ...}` or nested:
  // set as one dotted key, it replaces the value under either spelling (resolve_paper flattens
  // the mapping in key order, and a dotted "test.accuracy" comes after a nested "test").
  if (parts.size() > 2 && parts[0] == "paper") {
    std::string name = parts[1];
    for (size_t i = 2; i < parts.size(); ++i) name += "." + parts[i];
    parts = {"paper", name};
  }
  if (spec.root.is_null()) spec.root = json::object();  // an empty file
  if (!spec.root.is_object()) return;  // not a mapping: resolving reports it
  json* node = &spec.root;
  std::string path;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    path = join_path(path, parts[i]);
    json& child = (*node)[parts[i]];
    if (child.is_null()) child = json::object();
    if (!child.is_object())
      throw ConfigError(origin + ": " + path + " is " + describe_json(child) +
                        ", not a mapping; set " + path + " itself, or a key of a mapping");
    node = &child;
  }
  spec.where.erase_under(key);
  spec.where.set_override(key, origin);
  (*node)[parts.back()] = value;
}

void apply_overrides(YamlDocument& spec, const std::vector<std::string>& overrides) {
  for (const std::string& assignment : overrides) {
    const std::string origin = spec.where.file() + ": --set " + assignment;
    const size_t eq = assignment.find('=');
    const std::string key = eq == std::string::npos ? "" : assignment.substr(0, eq);
    if (key_parts(key).empty()) throw ConfigError(origin + ": expected key.path=value; write e.g. --set train.seed=2");
    // Every key of a spec is printable ASCII; other bytes (not UTF-8, say) would reach the JSON of
    // run.json and the messages that quote the key.
    for (const char c : key)
      if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7F) {
        char byte[8];
        std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned>(static_cast<unsigned char>(c)));
        throw ConfigError(spec.where.file() + ": --set: the key holds the byte " + byte +
                          "; keys are printable ASCII, e.g. --set train.seed=2");
      }
    KeyLocations scratch(origin);  // the value's own lines are those of the --set text
    apply_override(spec, key, yaml_to_json(parse_yaml(assignment.substr(eq + 1), origin), key, scratch), origin);
  }
}

json parse_yaml_value(const std::string& text, const std::string& origin) {
  KeyLocations scratch(origin);
  return yaml_to_json(parse_yaml(text, origin), "", scratch);
}

std::string locate_key(const std::string& path, const std::string& key) {
  return read_yaml_document(path).where.locate(ConfigIssue(key, "", ""));
}

std::string to_yaml(const ordered_json& mapping) {
  std::string out;
  emit_mapping(mapping, 0, out);
  return out;
}

}  // namespace tn
