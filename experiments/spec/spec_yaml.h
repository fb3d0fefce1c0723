#pragma once
// YAML I/O of experiment specs, apart from what the keys mean (experiments/spec/spec.h resolves them):
// a YAML file read as JSON (YAML 1.2 core schema for plain scalars) with the file:line of every
// key, `--set key.path=value` overrides applied to it, and resolved JSON written back as YAML
// that reads back the same. The only yaml-cpp user of the code base.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/platform/config/json_section.h"

namespace tn {

/// Key path -> where it was written: "file:line" for YAML, "file: --set k=v" for an override.
/// Paths look like "model.attention.diag.block_size" and "model.layers[2]".
class KeyLocations {
 public:
  explicit KeyLocations(std::string file) : file_(std::move(file)) {}

  void set_line(const std::string& key, int zero_based_line);
  void set_override(const std::string& key, const std::string& text);
  /// Forgets `key` and everything below it (an override replaces the whole value).
  void erase_under(const std::string& key);
  /// Where to point for `issue`: a --set among the key and its related keys (the user's latest
  /// change), else the key itself, a related key, the key's enclosing sections; else the file.
  std::string locate(const ConfigIssue& issue) const;
  const std::string& file() const { return file_; }
  /// Records that `key` was written in the mapping at `mapping` ("" for the top level), in order.
  void add_key(const std::string& mapping, const std::string& key);
  /// The keys of the mapping at `mapping` in the order the file wrote them (JSON objects sort
  /// them), e.g. a sweep's grid axes. Empty for a mapping the file did not write.
  std::vector<std::string> keys_in_order(const std::string& mapping) const;
  /// Takes `other`'s locations and key orders, over these, and its file name (a spec composed on
  /// top of its base).
  void overlay(const KeyLocations& other);

 private:
  struct Location {
    std::string text;
    bool from_override = false;
  };
  std::string file_;
  std::map<std::string, Location> at_;
  std::map<std::string, std::vector<std::string>> order_;
};

/// A spec file as JSON with the location of every key.
struct YamlDocument {
  nlohmann::json root;
  KeyLocations where;
};

/// Reads `path` as YAML. `bare_model`: a file without a `model:` key is the model mapping itself
/// and is read as {model: <file>}. Throws ConfigError: unreadable file or a directory, malformed
/// YAML (file:line:col), a duplicate key (with the line of the first), a non-scalar key.
YamlDocument read_yaml_document(const std::string& path, bool bare_model = false);

/// An experiment spec with composition: a top-level `base: other.yaml` (relative to the file)
/// is read first (itself composed), then this file's keys go on top: mappings merge key by key,
/// anything else replaces the base's value. Each key keeps the file:line where its value came
/// from. Without `base:`, the same as read_yaml_document. Throws ConfigError as that, and at the
/// `base:` line for a base that is missing or not a string, or that comes back around (a cycle).
YamlDocument read_spec_document(const std::string& path);

/// Whether `path` holds a YAML mapping with at least one of `keys` at its top level. Throws
/// ConfigError as read_yaml_document.
bool yaml_has_top_level_key(const std::string& path, const std::vector<std::string>& keys);

/// Applies "key.path=value" overrides in order (the value parsed as YAML; mappings on the way
/// are created). Throws ConfigError for a malformed assignment ("expected key.path=value") or a
/// path through a value that is not a mapping.
void apply_overrides(YamlDocument& doc, const std::vector<std::string>& overrides);

/// Sets `key` ("model.attention.diag.block_size") to `value` in `doc`, creating the mappings on
/// the way, and records `origin` (e.g. "sweep.yaml:7") as where the key was written, so a
/// resolving error about it points there. Throws ConfigError at `origin` for an empty key part
/// or a path through a value that is not a mapping.
void apply_override(YamlDocument& doc, const std::string& key, const nlohmann::json& value, const std::string& origin);

/// A value written on the command line ("64", "[softmax, linear]", "{kernel: elu}") as JSON, read
/// as YAML like a spec's values. Throws ConfigError at `origin` for malformed YAML.
nlohmann::json parse_yaml_value(const std::string& text, const std::string& origin);

/// Where `key` ("model.d_model") is written in the YAML file `path`: "path:line", or the line of
/// its closest enclosing section, or "path". Throws ConfigError as read_yaml_document.
std::string locate_key(const std::string& path, const std::string& key);

/// Block-style YAML of a JSON mapping: nested mappings indented by two, mappings and lists of
/// scalars in flow style when they fit in 80 columns; strings quoted only when they would not
/// read back as themselves. Reading the text back gives the same JSON.
std::string to_yaml(const nlohmann::ordered_json& mapping);

}  // namespace tn
