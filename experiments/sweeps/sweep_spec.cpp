#include "experiments/sweeps/sweep_spec.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>

#include "core/config/json_section.h"
#include "core/error.h"
#include "experiments/spec_yaml.h"

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

/// A named override set from `points:` (or the single unnamed point when there are none).
struct NamedPoint {
  std::string name;
  std::vector<SpecOverride> set;
};

/// The sweep document and the locations of its keys.
class SweepFile {
 public:
  SweepFile(const std::string& path, const SweepCommandLine& cli) : path_(path), doc_(read_yaml_document(path)) {
    if (!doc_.root.is_object())
      throw ConfigError(path + ": a sweep file is a mapping with base: and grid:, zip:, points: or seeds:");
    const auto has = [&](const char* key) { return doc_.root.contains(key); };
    if (has("model") || has("data") || has("train") || has("task")) {  // an experiment spec: sweep around it
      const std::filesystem::path spec(path);
      doc_ = YamlDocument{json{{"name", spec.stem().string() + "-multirun"}, {"base", spec.filename().string()}},
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
    const std::string origin = path_ + ": " + option + " " + assignment;
    const size_t eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ConfigError(origin + ": expected key.path=value" + (list ? "s, e.g. --grid model.d_model=64,128" : ""));
    const std::string key = assignment.substr(0, eq);
    for (const char* s : {"set", "grid", "zip"})
      if (doc_.root.contains(s) && doc_.root[s].is_object() && doc_.root[s].contains(key))
        throw ConfigError(origin + ": " + key + " is already in the sweep file's " + s + " (" + at(std::string(s) + "." + key) +
                          "); change it there, or leave out " + option);
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
  if (!node->is_object())
    f.fail(section, "is " + describe_json(*node) + ", not a mapping",
           "write key paths and their values, e.g. {model.diag_layers: [0, 1, 2]}");
  for (const std::string& key : f.keys_in_order(section)) {
    const json& values = (*node)[key];
    const std::string where = section + "." + key;
    if (!values.is_array() || values.empty())
      f.fail(where, "is " + describe_json(values) + ", not a non-empty list", "list the values, e.g. [0, 1, 2]");
    Axis axis{key, {}, {}};
    for (size_t i = 0; i < values.size(); ++i) {
      axis.values.push_back(values[i]);
      axis.origins.push_back(f.at(where + "[" + std::to_string(i) + "]"));
    }
    out.push_back(std::move(axis));
  }
  return out;
}

std::vector<NamedPoint> read_points(const SweepFile& f) {
  std::vector<NamedPoint> out;
  const json* node = f.root().contains("points") ? &f.root()["points"] : nullptr;
  if (node && !node->is_null()) {
    if (!node->is_array())
      f.fail("points", "is " + describe_json(*node) + ", not a list", "write [{name: t1, set: {...}}, ...]");
    for (size_t i = 0; i < node->size(); ++i) {
      const std::string where = "points[" + std::to_string(i) + "]";
      const json& p = (*node)[i];
      f.checked([&] {
        const JsonSection s(p, where);
        s.check_keys({"name", "set"}, true);
        NamedPoint np{s.string("name", "p" + std::to_string(i + 1)), read_mapping(f, p.value("set", json()), where + ".set")};
        if (np.name.empty()) s.fail("name", "is empty", "give the point a name, e.g. t1");
        out.push_back(std::move(np));
        return 0;
      });
    }
  }
  if (out.empty()) out.push_back({"", {}});
  return out;
}

std::optional<Axis> read_seeds(const SweepFile& f) {
  if (!f.root().contains("seeds") || f.root()["seeds"].is_null()) return std::nullopt;
  const json& seeds = f.root()["seeds"];
  if (!seeds.is_array() || seeds.empty())
    f.fail("seeds", "is " + describe_json(seeds) + ", not a non-empty list", "list the seeds, e.g. [1, 2, 3]");
  Axis axis{kSeedKey, {}, {}};
  for (size_t i = 0; i < seeds.size(); ++i) {
    const std::string where = "seeds[" + std::to_string(i) + "]";
    if (!seeds[i].is_number_integer() || seeds[i].get<int64_t>() < 0)
      f.fail(where, "is " + describe_json(seeds[i]) + ", not a non-negative integer", "use seeds such as 1, 2, 3");
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

SweepSpec load_sweep(const std::string& path, const SweepCommandLine& cli) {
  const SweepFile f(path, cli);
  f.checked([&] {
    JsonSection(f.root(), "").check_keys({"name", "base", "set", "grid", "zip", "points", "seeds", "description"}, true);
    return 0;
  });
  SweepSpec sweep;
  sweep.path = path;
  sweep.name = f.checked([&] { return JsonSection(f.root(), "").string("name", std::filesystem::path(path).stem().string()); });
  if (sweep.name.empty() || safe_name(sweep.name) != sweep.name)
    f.fail("name", "\"" + sweep.name + "\" is not a folder name", "use letters, digits, '.', '+' and '-'");
  if (!f.root().contains("base") || !f.root()["base"].is_string())
    f.fail("base", "is required: the experiment spec every point starts from", "add base: ../quickstart.yaml (relative to this file)");
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  sweep.base = (folder / f.root()["base"].get<std::string>()).lexically_normal().string();
  if (!std::filesystem::is_regular_file(sweep.base))
    f.fail("base", sweep.base + " is not a file", "give the spec's path relative to this sweep file");

  sweep.set = read_mapping(f, f.root().value("set", json()), "set");
  const std::vector<Axis> grid = read_axes(f, "grid");
  const std::vector<Axis> zip = read_axes(f, "zip");
  const std::optional<Axis> seeds = read_seeds(f);
  const std::vector<NamedPoint> named = read_points(f);

  // Each key in one place only.
  std::map<std::string, std::string> owner;  // key -> section
  auto claim = [&](const std::string& key, const std::string& section) {
    if (auto it = owner.find(key); it != owner.end())
      f.fail(section + "." + key, "is also in " + it->second, "set each key in one of set, grid, zip and seeds");
    owner[key] = section;
  };
  for (const SpecOverride& o : sweep.set) claim(o.key, "set");
  for (const Axis& a : grid) claim(a.key, "grid");
  for (const Axis& a : zip) claim(a.key, "zip");
  if (seeds) {
    if (owner.count(kSeedKey)) f.fail("seeds", "train.seed is also in " + owner[kSeedKey], "give the seeds in one place");
    owner[kSeedKey] = "seeds";
  }
  for (const Axis& a : zip)
    if (a.values.size() != zip.front().values.size())
      f.fail("zip." + a.key, "has " + std::to_string(a.values.size()) + " values but zip." + zip.front().key + " has " +
                                 std::to_string(zip.front().values.size()),
             "zip axes vary together: give them the same number of values (or put one in grid)");

  // Names: the varying keys' short names.
  for (const Axis& a : grid) sweep.axes.push_back(a.key);
  for (const Axis& a : zip) sweep.axes.push_back(a.key);
  if (seeds) sweep.axes.push_back(kSeedKey);
  const std::vector<std::string> shorts = short_names(sweep.axes);

  // Expansion: named points x grid (first axis slowest) x zip x seeds.
  size_t grid_count = 1;
  for (const Axis& a : grid) grid_count *= a.values.size();
  const size_t zip_count = zip.empty() ? 1 : zip.front().values.size();
  const size_t seed_count = seeds ? seeds->values.size() : 1;
  const YamlDocument base = f.checked([&] {
    try {
      return read_spec_document(sweep.base);
    } catch (const ConfigError& e) {
      throw ConfigError(f.at("base") + ": base: " + e.what());
    }
  });
  std::map<std::string, std::string> seen_dirs;  // dir -> point name
  std::vector<std::pair<json, std::string>> seen_overrides;
  for (const NamedPoint& np : named) {
    for (size_t g = 0; g < grid_count; ++g) {
      for (size_t z = 0; z < zip_count; ++z) {
        for (size_t s = 0; s < seed_count; ++s) {
          SweepPoint p;
          p.overrides = np.set;
          std::vector<std::pair<const Axis*, size_t>> picks;
          size_t rest = g;
          std::vector<size_t> grid_pick(grid.size());
          for (size_t i = grid.size(); i-- > 0;) {
            grid_pick[i] = rest % grid[i].values.size();
            rest /= grid[i].values.size();
          }
          for (size_t i = 0; i < grid.size(); ++i) picks.emplace_back(&grid[i], grid_pick[i]);
          for (const Axis& a : zip) picks.emplace_back(&a, z);
          if (seeds) picks.emplace_back(&*seeds, s);
          std::string name = np.name, dir = safe_name(np.name);
          for (size_t i = 0; i < picks.size(); ++i) {
            const auto& [axis, k] = picks[i];
            p.overrides.push_back({axis->key, axis->values[k], axis->origins[k]});
            const std::string value = point_value_text(axis->values[k]);
            name += (name.empty() ? "" : " ") + shorts[i] + "=" + value;
            dir += (dir.empty() ? "" : "_") + safe_name(shorts[i]) + "-" + safe_name(value);
          }
          p.name = name.empty() ? sweep.name : name;
          p.dir = dir.empty() ? "default" : bounded(dir);
          const std::string origin = p.overrides.empty() ? f.at("base") : p.overrides.back().origin;
          if (auto it = seen_dirs.find(p.dir); it != seen_dirs.end())
            throw ConfigError(origin + ": points `" + it->second + "` and `" + p.name + "` get the same folder " + p.dir +
                              "; give them distinct names in points:");
          const json eff = effective(p.overrides);
          for (const auto& [other, other_name] : seen_overrides)
            if (other == eff)
              throw ConfigError(origin + ": points `" + other_name + "` and `" + p.name +
                                "` are the same experiment (duplicate points); remove one");
          seen_dirs[p.dir] = p.name;
          seen_overrides.emplace_back(eff, p.name);

          YamlDocument doc = base;
          try {
            for (const SpecOverride& o : sweep.set) apply_override(doc, o.key, o.value, o.origin);
            for (const SpecOverride& o : p.overrides) apply_override(doc, o.key, o.value, o.origin);
            p.spec = resolve_spec_document(doc);
          } catch (const ConfigError& e) {
            throw ConfigError(std::string(e.what()) + " (in point `" + p.name + "` of " + path + ")");
          }
          sweep.points.push_back(std::move(p));
        }
      }
    }
  }
  return sweep;
}

}  // namespace tn
