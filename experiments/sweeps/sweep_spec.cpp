#include "experiments/sweeps/sweep_spec.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

#include "core/platform/config/json_section.h"
#include "core/error.h"
#include "experiments/spec/spec_yaml.h"

namespace tn {
namespace {

using nlohmann::json;

constexpr const char* kSeedKey = "train.seed";

/// One varying key and its values, with where the sweep file wrote each value.
struct Axis {
  std::string key;
  std::vector<json> values;
  std::vector<std::string> origins;
};

/// A named override set from `points:` (or the single unnamed point when there are none), with
/// the spec it starts from when it names its own (`base:`, resolved; else empty: the sweep's).
struct NamedPoint {
  std::string name;
  std::vector<SpecOverride> set;
  std::string base;
  std::string base_key;  // "points[2].base", for errors
};

/// `text` when it is at most 120 bytes, else its first 100 bytes (cut at a UTF-8 boundary), "...",
/// and its length.
std::string abbreviated(const std::string& text) {
  if (text.size() <= 120) return text;
  size_t cut = 100;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "... (" + std::to_string(text.size()) + " bytes)";
}

/// The sweep document and the locations of its keys.
class SweepFile {
 public:
  SweepFile(const std::string& path, const SweepCommandLine& cli) : path_(path), doc_(read_yaml_document(path)) {
    if (!doc_.root.is_object())
      throw ConfigError(path + ": a sweep file is a mapping with base: and grid:, zip:, points: or seeds:");
    const auto has = [&](const char* key) { return doc_.root.contains(key); };
    if (has("model") || has("data") || has("train") || has("task")) {  // an experiment spec: sweep around it
      const std::filesystem::path spec(path);
      // Named from the file, as a folder may be named ("my spec.yaml" -> my_spec-multirun).
      doc_ = YamlDocument{json{{"name", safe_name(spec.stem().string()) + "-multirun"}, {"base", spec.filename().string()}},
                          KeyLocations(path)};
    }
    for (const std::string& a : cli.set) add_from_command_line("set", "--set", a, false);
    for (const std::string& a : cli.grid) add_from_command_line("grid", "--grid", a, true);
  }
  const json& root() const { return doc_.root; }
  /// "file:line" of `key` ("grid.model.d_model", "points[1].set"), or of its section, or "file".
  std::string at(const std::string& key) const { return doc_.where.locate(ConfigIssue(key, "", "")); }
  [[noreturn]] void fail(const std::string& key, const std::string& problem, const std::string& fix) const {
    throw ConfigError(at(key) + ": " + key + ": " + problem + "; " + fix);
  }
  /// Rethrows a ConfigIssue from a JsonSection over the document with its location.
  template <class F>
  auto checked(F&& f) const {
    try {
      return f();
    } catch (const ConfigIssue& issue) {
      throw ConfigError(doc_.where.locate(issue) + ": " + issue.what());
    }
  }
  const std::string& path() const { return path_; }
  /// Adds "key=value" (or "key=v1,v2,..." as a list when `list`) to the mapping `section`,
  /// located at the option's text. ConfigError for a malformed assignment or a key the file has.
  void add_from_command_line(const std::string& section, const std::string& option, const std::string& assignment,
                             bool list) {
    // Every value of a --grid is located at this text: a long list is abbreviated, so that
    // n values do not carry n copies of the whole option (quadratic memory).
    const std::string origin = path_ + ": " + option + " " + abbreviated(assignment);
    const size_t eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ConfigError(origin + ": expected key.path=value" + (list ? "s, e.g. --grid model.d_model=64,128" : ""));
    const std::string key = assignment.substr(0, eq);
    for (const char* s : {"set", "grid", "zip"}) {
      if (!doc_.root.contains(s) || !doc_.root[s].is_object() || !doc_.root[s].contains(key)) continue;
      if (const auto given = from_command_line_.find(key); given != from_command_line_.end())
        throw ConfigError(origin + ": " + key + " is already given by " + given->second +
                          "; give each key once (all its values in one --grid key=v1,v2,...)");
      throw ConfigError(origin + ": " + key + " is already in the sweep file's " + s + " (" + at(std::string(s) + "." + key) +
                          "); change it there, or leave out " + option);
    }
    from_command_line_[key] = option + " " + assignment;
    const json value = parse_yaml_value(list ? "[" + assignment.substr(eq + 1) + "]" : assignment.substr(eq + 1), origin);
    if (!doc_.root.contains(section) || !doc_.root[section].is_object()) doc_.root[section] = json::object();
    doc_.root[section][key] = value;
    doc_.where.add_key(section, key);
    doc_.where.set_override(section + "." + key, origin);
    for (size_t i = 0; list && i < value.size(); ++i)
      doc_.where.set_override(section + "." + key + "[" + std::to_string(i) + "]", origin);
  }
  /// The keys of the mapping at `key` in file order.
  std::vector<std::string> keys_in_order(const std::string& key) const { return doc_.where.keys_in_order(key); }

 private:
  std::string path_;
  YamlDocument doc_;
  std::map<std::string, std::string> from_command_line_;  // key -> the --set/--grid that gave it
};

/// The overrides of a mapping of key paths (`set:`, points[i].set), each located in the file.
std::vector<SpecOverride> read_mapping(const SweepFile& f, const json& mapping, const std::string& where) {
  std::vector<SpecOverride> out;
  if (mapping.is_null()) return out;
  if (!mapping.is_object())
    f.fail(where, "is " + describe_json(mapping) + ", not a mapping", "write key paths and values, e.g. {model.d_model: 64}");
  for (const std::string& key : f.keys_in_order(where)) out.push_back({key, mapping[key], f.at(where + "." + key)});
  return out;
}

std::vector<Axis> read_axes(const SweepFile& f, const std::string& section) {
  std::vector<Axis> out;
  const json* node = f.root().contains(section) ? &f.root()[section] : nullptr;
  if (!node || node->is_null()) return out;
  if (!node->is_object() || node->empty())
    f.fail(section, "is " + describe_json(*node) + ", not a non-empty mapping",
           "write key paths and their values, e.g. {model.diag_layers: [0, 1, 2]}, or leave " + section + ": out");
  for (const std::string& key : f.keys_in_order(section)) {
    const json& values = (*node)[key];
    const std::string where = section + "." + key;
    if (!values.is_array() || values.empty())
      f.fail(where, "is " + describe_json(values) + ", not a non-empty list", "list the values, e.g. [0, 1, 2]");
    Axis axis{key, {}, {}};
    std::map<json, size_t> first;  // value -> its first index (json's order agrees with its ==)
    for (size_t i = 0; i < values.size(); ++i) {
      const std::string at = where + "[" + std::to_string(i) + "]";
      if (const auto [it, fresh] = first.emplace(values[i], i); !fresh)
        f.fail(at, "repeats the value " + values[i].dump() + " (" + where + "[" + std::to_string(it->second) + "])",
               "list each value once: a repeated value would train the same run twice");
      axis.values.push_back(values[i]);
      axis.origins.push_back(f.at(at));
    }
    out.push_back(std::move(axis));
  }
  return out;
}

/// `base` (a spec path relative to the sweep file) resolved; ConfigError at `key` when it is not a file.
std::string resolve_base(const SweepFile& f, const json& base, const std::string& key) {
  if (!base.is_string() || base.get<std::string>().empty())
    f.fail(key, "is " + describe_json(base) + ", not a spec path", "give the spec's path relative to this sweep file");
  const std::filesystem::path folder = std::filesystem::path(f.path()).parent_path();
  const std::string path = (folder / base.get<std::string>()).lexically_normal().string();
  if (!std::filesystem::is_regular_file(path)) f.fail(key, path + " is not a file", "give the spec's path relative to this sweep file");
  return path;
}

std::vector<NamedPoint> read_points(const SweepFile& f) {
  std::vector<NamedPoint> out;
  const json* node = f.root().contains("points") ? &f.root()["points"] : nullptr;
  if (node && !node->is_null()) {
    if (!node->is_array() || node->empty())
      f.fail("points", "is " + describe_json(*node) + ", not a non-empty list",
             "write [{name: t1, set: {...}}, ...], or leave points: out");
    for (size_t i = 0; i < node->size(); ++i) {
      const std::string where = "points[" + std::to_string(i) + "]";
      const json& p = (*node)[i];
      if (!p.is_object())
        f.fail(where, "is " + describe_json(p) + ", not a mapping", "write each point as {name: t1, base: ..., set: {...}}");
      f.checked([&] {
        const JsonSection s(p, where);
        s.check_keys({"name", "base", "set"}, true);
        NamedPoint np{s.string("name", "p" + std::to_string(i + 1)), read_mapping(f, p.value("set", json()), where + ".set"),
                      "", where + ".base"};
        if (np.name.empty()) s.fail("name", "is empty", "give the point a name, e.g. t1");
        if (p.contains("base")) np.base = resolve_base(f, p["base"], np.base_key);
        out.push_back(std::move(np));
        return 0;
      });
    }
  }
  if (out.empty()) out.push_back({"", {}, "", ""});
  return out;
}

std::optional<Axis> read_seeds(const SweepFile& f) {
  if (!f.root().contains("seeds") || f.root()["seeds"].is_null()) return std::nullopt;
  const json& seeds = f.root()["seeds"];
  if (!seeds.is_array() || seeds.empty())
    f.fail("seeds", "is " + describe_json(seeds) + ", not a non-empty list", "list the seeds, e.g. [1, 2, 3]");
  Axis axis{kSeedKey, {}, {}};
  std::map<json, size_t> first;  // seed -> its first index
  for (size_t i = 0; i < seeds.size(); ++i) {
    const std::string where = "seeds[" + std::to_string(i) + "]";
    if (!seeds[i].is_number_integer() || seeds[i].get<int64_t>() < 0)
      f.fail(where, "is " + describe_json(seeds[i]) + ", not a non-negative integer", "use seeds such as 1, 2, 3");
    if (const auto [it, fresh] = first.emplace(seeds[i], i); !fresh)
      f.fail(where, "repeats seed " + seeds[i].dump() + " (seeds[" + std::to_string(it->second) + "])",
             "list each seed once: a repeated seed would train the same run twice");
    axis.values.push_back(seeds[i]);
    axis.origins.push_back(f.at(where));
  }
  return axis;
}

/// The shortest dotted suffix of each key that no other key ends with ("normalize", "seed").
std::vector<std::string> short_names(const std::vector<std::string>& keys) {
  std::vector<std::string> out;
  for (const std::string& key : keys) {
    std::string name = key;
    for (size_t pos = key.rfind('.'); pos != std::string::npos; pos = pos == 0 ? std::string::npos : key.rfind('.', pos - 1)) {
      const std::string suffix = key.substr(pos + 1);
      const bool unique = std::none_of(keys.begin(), keys.end(), [&](const std::string& other) {
        return other != key && (other == suffix || (other.size() > suffix.size() &&
                                                    other.compare(other.size() - suffix.size(), suffix.size(), suffix) == 0 &&
                                                    other[other.size() - suffix.size() - 1] == '.'));
      });
      if (unique) {
        name = suffix;
        break;
      }
    }
    out.push_back(name);
  }
  return out;
}

uint64_t fnv1a(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

/// Folder names stay under 120 characters: longer ones are cut and given a hash of the whole.
std::string bounded(const std::string& dir) {
  if (dir.size() <= 120) return dir;
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(fnv1a(dir)));
  return dir.substr(0, 103) + "-" + hash;
}

/// The point's overrides as one mapping (a later value of the same key wins), for duplicates.
json effective(const std::vector<SpecOverride>& overrides) {
  json out = json::object();
  for (const SpecOverride& o : overrides) out[o.key] = o.value;
  return out;
}

}  // namespace

std::string SpecOverride::assignment() const { return key + "=" + value.dump(); }

std::string point_value_text(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "none";
  if (value.is_array()) {
    std::string out;
    for (const json& v : value) out += (out.empty() ? "" : ",") + point_value_text(v);
    return out;
  }
  return value.dump();
}

std::string safe_name(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                      c == '+' || c == '-';
    out += keep ? c : '_';
  }
  if (!out.empty() && out[0] == '.') out[0] = '_';
  return out;
}

SweepSpec load_sweep(const std::string& path) { return load_sweep(path, SweepCommandLine{}); }

namespace {

/// The sweep's varying axes and named points, as read from its file.
struct SweepAxes {
  std::vector<Axis> grid, zip;
  std::optional<Axis> seeds;
  std::vector<NamedPoint> named;
};

/// Refuses a key in two of set/grid/zip/seeds and zip axes of unequal lengths.
void check_axes(const SweepFile& f, const SweepSpec& sweep, const SweepAxes& a) {
  std::map<std::string, std::string> owner;  // key -> section
  auto claim = [&](const std::string& key, const std::string& section) {
    if (auto it = owner.find(key); it != owner.end())
      f.fail(section + "." + key, "is also in " + it->second, "set each key in one of set, grid, zip and seeds");
    owner[key] = section;
  };
  for (const SpecOverride& o : sweep.set) claim(o.key, "set");
  for (const Axis& x : a.grid) claim(x.key, "grid");
  for (const Axis& x : a.zip) claim(x.key, "zip");
  if (a.seeds) {
    if (owner.count(kSeedKey)) f.fail("seeds", "train.seed is also in " + owner[kSeedKey], "give the seeds in one place");
    owner[kSeedKey] = "seeds";
  }
  for (size_t i = 0; i < a.named.size(); ++i)  // a point's own set would be overwritten by an axis
    for (const SpecOverride& o : a.named[i].set)
      if (auto it = owner.find(o.key); it != owner.end() && it->second != "set")
        f.fail("points[" + std::to_string(i) + "].set." + o.key, "is also in " + it->second,
               "set each key in one of a point's set, grid, zip and seeds");
  for (const Axis& x : a.zip)
    if (x.values.size() != a.zip.front().values.size())
      f.fail("zip." + x.key, "has " + std::to_string(x.values.size()) + " values but zip." + a.zip.front().key + " has " +
                                 std::to_string(a.zip.front().values.size()),
             "zip axes vary together: give them the same number of values (or put one in grid)");
}

/// The (axis, value index) picks of grid combination `g` (first axis slowest), zip row `z`, seed `s`.
std::vector<std::pair<const Axis*, size_t>> picks_of(const SweepAxes& a, size_t g, size_t z, size_t s) {
  std::vector<std::pair<const Axis*, size_t>> picks;
  std::vector<size_t> grid_pick(a.grid.size());
  for (size_t i = a.grid.size(); i-- > 0;) {
    grid_pick[i] = g % a.grid[i].values.size();
    g /= a.grid[i].values.size();
  }
  for (size_t i = 0; i < a.grid.size(); ++i) picks.emplace_back(&a.grid[i], grid_pick[i]);
  for (const Axis& x : a.zip) picks.emplace_back(&x, z);
  if (a.seeds) picks.emplace_back(&*a.seeds, s);
  return picks;
}

/// "1.2e+09" or "150000".
std::string count_text(long double n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, n < 1e7L ? "%.0Lf" : "%.3Lg", n);
  return buf;
}

/// Expands the named points x grid x zip x seeds into resolved points, refusing colliding folders
/// and duplicate experiments. Each base document is read once.
class PointExpander {
 public:
  PointExpander(const SweepFile& f, SweepSpec& sweep, const SweepAxes& a) : f_(f), sweep_(sweep), a_(a) {
    long double total = static_cast<long double>(a.named.size());  // counted before any product can overflow
    for (const Axis& x : a.grid) total *= static_cast<long double>(x.values.size());
    zip_count_ = a.zip.empty() ? 1 : a.zip.front().values.size();
    seed_count_ = a.seeds ? a.seeds->values.size() : 1;
    total *= static_cast<long double>(zip_count_) * static_cast<long double>(seed_count_);
    if (total > static_cast<long double>(kMaxSweepPoints))
      f.fail(a.grid.empty() ? "points" : "grid",
             "makes " + count_text(total) + " points (points × grid × zip × seeds), more than the " +
                 std::to_string(kMaxSweepPoints) + " one sweep runs",
             "split it into several sweeps, or vary fewer keys at once");
    for (const Axis& x : a.grid) grid_count_ *= x.values.size();
    shorts_ = short_names(sweep.axes);
  }
  void run() {
    for (const NamedPoint& np : a_.named)
      for (size_t g = 0; g < grid_count_; ++g)
        for (size_t z = 0; z < zip_count_; ++z)
          for (size_t s = 0; s < seed_count_; ++s) add(np, picks_of(a_, g, z, s));
  }

 private:
  void add(const NamedPoint& np, const std::vector<std::pair<const Axis*, size_t>>& picks) {
    SweepPoint p;
    p.overrides = np.set;
    p.base = np.base.empty() ? sweep_.base : np.base;
    std::string name = np.name, dir = safe_name(np.name);
    for (size_t i = 0; i < picks.size(); ++i) {
      const auto& [axis, k] = picks[i];
      p.overrides.push_back({axis->key, axis->values[k], axis->origins[k]});
      const std::string value = point_value_text(axis->values[k]);
      name += (name.empty() ? "" : " ") + shorts_[i] + "=" + value;
      dir += (dir.empty() ? "" : "_") + safe_name(shorts_[i]) + "-" + safe_name(value);
    }
    p.name = name.empty() ? sweep_.name : name;
    p.dir = dir.empty() ? "default" : bounded(dir);
    check_unique(p, np);
    YamlDocument doc = base_document(np);
    try {
      for (const SpecOverride& o : sweep_.set) apply_override(doc, o.key, o.value, o.origin);
      for (const SpecOverride& o : p.overrides) apply_override(doc, o.key, o.value, o.origin);
      p.spec = resolve_spec_document(doc);
    } catch (const ConfigError& e) {
      throw ConfigError(std::string(e.what()) + " (in point `" + p.name + "` of " + sweep_.path + ")");
    }
    drop_paper_unless_described(p, np);
    sweep_.points.push_back(std::move(p));
  }
  void check_unique(const SweepPoint& p, const NamedPoint& np) {
    const std::string origin = p.overrides.empty() ? f_.at(np.base.empty() ? "base" : np.base_key) : p.overrides.back().origin;
    if (auto it = seen_dirs_.find(p.dir); it != seen_dirs_.end())
      throw ConfigError(origin + ": points `" + it->second + "` and `" + p.name + "` get the same folder " + p.dir +
                        "; give them distinct names in points:");
    json eff = effective(p.overrides);
    eff["(base)"] = p.base;
    if (auto it = seen_overrides_.find(eff); it != seen_overrides_.end())
      throw ConfigError(origin + ": points `" + it->second + "` and `" + p.name +
                        "` are the same experiment (duplicate points); remove one");
    seen_dirs_[p.dir] = p.name;
    seen_overrides_.emplace(std::move(eff), p.name);
  }
  /// Paper values belong to the points they describe: a point whose model, data or task differs
  /// from its base's (T1's ListOps value under a grid of token mixers) drops the base's values,
  /// unless the sweep or the point sets paper values itself.
  void drop_paper_unless_described(SweepPoint& p, const NamedPoint& np) {
    if (p.spec.paper.empty()) return;
    auto is_paper = [](const SpecOverride& o) { return o.key == "paper" || o.key.rfind("paper.", 0) == 0; };
    if (std::any_of(sweep_.set.begin(), sweep_.set.end(), is_paper) ||
        std::any_of(p.overrides.begin(), p.overrides.end(), is_paper))
      return;
    const ExperimentSpec& base = base_spec(np);
    const bool same_task = base.task == p.spec.task &&
                           (base.task_options ? p.spec.task_options && base.task_options->equals(*p.spec.task_options)
                                              : !p.spec.task_options);
    if (same_task && base.model == p.spec.model && base.data && p.spec.data && base.data->equals(*p.spec.data)) return;
    p.spec.paper.clear();
    p.drops_paper = true;
  }
  const ExperimentSpec& base_spec(const NamedPoint& np) {
    const std::string& path = np.base.empty() ? sweep_.base : np.base;
    if (auto it = base_specs_.find(path); it != base_specs_.end()) return it->second;
    return base_specs_.emplace(path, resolve_spec_document(base_document(np))).first->second;
  }
  const YamlDocument& base_document(const NamedPoint& np) {
    const std::string& path = np.base.empty() ? sweep_.base : np.base;
    if (auto it = bases_.find(path); it != bases_.end()) return it->second;
    const std::string key = np.base.empty() ? "base" : np.base_key;
    YamlDocument doc = f_.checked([&] {
      try {
        return read_spec_document(path);
      } catch (const ConfigError& e) {
        throw ConfigError(f_.at(key) + ": " + key + ": " + e.what());
      }
    });
    return bases_.emplace(path, std::move(doc)).first->second;
  }

  const SweepFile& f_;
  SweepSpec& sweep_;
  const SweepAxes& a_;
  size_t grid_count_ = 1, zip_count_ = 1, seed_count_ = 1;
  std::vector<std::string> shorts_;
  std::map<std::string, YamlDocument> bases_;
  std::map<std::string, ExperimentSpec> base_specs_;  // bases_, resolved alone (for their paper values)
  std::map<std::string, std::string> seen_dirs_;  // dir -> point name
  std::map<json, std::string> seen_overrides_;  // effective overrides -> point name (json's order: 1 and 1.0 are one key, as ==)
};

}  // namespace

SweepSpec load_sweep(const std::string& path, const SweepCommandLine& cli) {
  const SweepFile f(path, cli);
  f.checked([&] {
    JsonSection(f.root(), "").check_keys({"name", "base", "set", "grid", "zip", "points", "seeds", "description"}, true);
    return 0;
  });
  SweepSpec sweep;
  sweep.path = path;
  sweep.command_line = cli;
  sweep.name = f.checked([&] { return JsonSection(f.root(), "").string("name", safe_name(std::filesystem::path(path).stem().string())); });
  if (sweep.name.empty() || safe_name(sweep.name) != sweep.name)
    f.fail("name", "\"" + sweep.name + "\" is not a folder name", "use letters, digits, '_', '.', '+' and '-' (not starting with '.')");
  SweepAxes axes{read_axes(f, "grid"), read_axes(f, "zip"), read_seeds(f), read_points(f)};
  const bool every_point_has_base =
      std::all_of(axes.named.begin(), axes.named.end(), [](const NamedPoint& np) { return !np.base.empty(); });
  if (f.root().contains("base") || !every_point_has_base) {
    if (!f.root().contains("base") || !f.root()["base"].is_string())
      f.fail("base", "is required: the experiment spec every point starts from (unless each point names its own base:)",
             "add base: ../quickstart.yaml (relative to this file)");
    sweep.base = resolve_base(f, f.root()["base"], "base");
  }
  sweep.set = read_mapping(f, f.root().value("set", json()), "set");
  check_axes(f, sweep, axes);
  for (const Axis& a : axes.grid) sweep.axes.push_back(a.key);
  for (const Axis& a : axes.zip) sweep.axes.push_back(a.key);
  if (axes.seeds) sweep.axes.push_back(kSeedKey);
  PointExpander(f, sweep, axes).run();
  return sweep;
}

}  // namespace tn
