#include "experiments/spec.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "core/error.h"
#include "layers/model_config_json.h"

namespace tn {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

// ---------------------------------------------------------------------------------------------
// Where each key was written: "file:line" for YAML, "file: --set k=v" for overrides.
// ---------------------------------------------------------------------------------------------

/// Key path → location text. Paths: "model.attention.diag.block_size", "model.layers[2]".
class Locations {
 public:
  explicit Locations(std::string file) : file_(std::move(file)) {}

  void set_line(const std::string& key, int zero_based_line) {
    at_[key] = {file_ + ":" + std::to_string(zero_based_line + 1), false};
  }
  void set_override(const std::string& key, const std::string& text) { at_[key] = {text, true}; }
  /// Forgets `key` and everything below it (an override replaces the whole value).
  void erase_under(const std::string& key) {
    for (auto it = at_.begin(); it != at_.end();) {
      const std::string& k = it->first;
      const bool below = k == key || (k.size() > key.size() && k.compare(0, key.size(), key) == 0 &&
                                      (k[key.size()] == '.' || k[key.size()] == '['));
      it = below ? at_.erase(it) : std::next(it);
    }
  }
  /// Where to point for `issue`: a --set among the key and its related keys (the user's latest
  /// change), else the key itself, a related key, the key's enclosing sections; else the file.
  std::string locate(const ConfigIssue& issue) const {
    std::vector<std::string> keys = {issue.key};
    keys.insert(keys.end(), issue.related.begin(), issue.related.end());
    for (const std::string& k : keys)
      if (auto it = at_.find(k); it != at_.end() && it->second.from_override) return it->second.text;
    for (const std::string& k : keys)
      if (auto it = at_.find(k); it != at_.end()) return it->second.text;
    for (std::string k = parent(issue.key); !k.empty(); k = parent(k))
      if (auto it = at_.find(k); it != at_.end()) return it->second.text;
    return file_;
  }
  const std::string& file() const { return file_; }

 private:
  struct Location {
    std::string text;
    bool from_override = false;
  };
  static std::string parent(const std::string& key) {
    const size_t cut = key.find_last_of(".[");
    return cut == std::string::npos ? "" : key.substr(0, cut);
  }
  std::string file_;
  std::map<std::string, Location> at_;
};

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

json yaml_to_json(const YAML::Node& node, const std::string& path, Locations& where) {
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
        out.push_back(yaml_to_json(node[i], child, where));
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
        out[key] = yaml_to_json(it->second, child, where);
      }
      return out;
    }
  }
  return nullptr;
}

YAML::Node parse_yaml(const std::string& text, const std::string& origin) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(origin + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                      ": malformed YAML: " + e.msg +
                      "; fix the syntax there (indentation, `key: value` pairs, matching brackets and quotes)");
  }
}

std::string read_text(const std::string& path) {
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored))
    throw ConfigError(path + ": is a directory, not a spec file; give the YAML file, e.g. configs/quickstart.yaml");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ConfigError(path + ": cannot read the spec file (" + std::strerror(errno) +
                      "); check the path, e.g. configs/quickstart.yaml");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// A spec file as JSON with the location of every key. `model_only`: a file without a `model:`
/// key is the model mapping itself and is read as {model: <file>}.
struct LoadedSpec {
  json root;
  Locations where;
};

LoadedSpec load_yaml_spec(const std::string& path, bool model_only) {
  const YAML::Node node = parse_yaml(read_text(path), path);
  LoadedSpec loaded{json(nullptr), Locations(path)};
  const bool bare_model = model_only && !(node.IsMap() && node["model"]);
  if (bare_model) {
    loaded.root = json::object();
    loaded.root["model"] = yaml_to_json(node, "model", loaded.where);
  } else {
    loaded.root = yaml_to_json(node, "", loaded.where);
  }
  return loaded;
}

/// --set key.path=value: value parsed as YAML; mappings on the way are created.
void apply_overrides(LoadedSpec& spec, const std::vector<std::string>& overrides) {
  for (const std::string& assignment : overrides) {
    const std::string origin = spec.where.file() + ": --set " + assignment;
    const size_t eq = assignment.find('=');
    std::vector<std::string> parts;
    if (eq != std::string::npos) {
      std::stringstream keys(assignment.substr(0, eq));
      for (std::string part; std::getline(keys, part, '.');) parts.push_back(part);
    }
    const bool malformed = eq == std::string::npos || eq == 0 || assignment[eq - 1] == '.' ||
                           std::any_of(parts.begin(), parts.end(), [](const std::string& p) { return p.empty(); });
    if (malformed)
      throw ConfigError(origin + ": expected key.path=value; write e.g. --set train.seed=2");
    const std::string key = assignment.substr(0, eq);
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
    Locations scratch(origin);  // the value's own lines are those of the --set text
    (*node)[parts.back()] = yaml_to_json(parse_yaml(assignment.substr(eq + 1), origin), key, scratch);
  }
}

// ---------------------------------------------------------------------------------------------
// data: and train: (reference resolve_run_spec)
// ---------------------------------------------------------------------------------------------

DataSpec resolve_data(const JsonSection& s) {
  s.check_keys({"train", "valid", "test", "split_valid_from_train", "seq_len"}, true);
  DataSpec d;
  if (!s.has("train"))
    s.fail("train", "is required",
           "add data.train: a WikiText-layout .tokens file (relative paths are taken from the data root)");
  d.train = s.string("train", "");
  if (d.train.empty()) s.fail("train", "is empty", "give the training file's path");
  d.valid = s.has("valid") ? s.string("valid", "") : "";
  d.test = s.has("test") ? s.string("test", "") : "";
  d.split_valid_from_train = s.number("split_valid_from_train", d.split_valid_from_train);
  if (!(d.split_valid_from_train >= 0 && d.split_valid_from_train < 1))
    s.fail("split_valid_from_train", "must lie in [0, 1), got " + json(d.split_valid_from_train).dump(),
           "use a fraction such as 0.1 (0: no split)");
  d.seq_len = s.at_least("seq_len", s.integer("seq_len", d.seq_len), 1, "use a positive length such as 256");
  if (!d.valid.empty() && d.split_valid_from_train > 0)
    s.fail("split_valid_from_train", "cannot be combined with data.valid",
           "give data.valid or data.split_valid_from_train, not both: remove one", {"valid"});
  return d;
}

OptimizerSpec resolve_optimizer(const JsonSection& s) {
  s.check_keys({"name", "lr", "betas", "eps", "weight_decay"}, true);
  OptimizerSpec o;
  o.name = s.choice<std::string>("name", o.name, {{"adamw", "adamw"}});
  o.lr = s.positive("lr", s.number("lr", o.lr), "use a positive peak learning rate such as 5e-4");
  if (const json* betas = s.get("betas")) {
    if (!betas->is_array() || betas->size() != 2)
      s.fail("betas", "expected [beta1, beta2], got " + describe_json(*betas), "write e.g. betas: [0.9, 0.98]");
    json entries = {{"betas[0]", (*betas)[0]}, {"betas[1]", (*betas)[1]}};
    const JsonSection b(entries, s.path());
    o.beta1 = b.number("betas[0]", o.beta1);
    o.beta2 = b.number("betas[1]", o.beta2);
    for (const auto& [key, value] : {std::pair{"betas[0]", o.beta1}, std::pair{"betas[1]", o.beta2}})
      if (!(value >= 0 && value < 1))
        b.fail(key, "must lie in [0, 1), got " + json(value).dump(), "use e.g. betas: [0.9, 0.98]");
  }
  o.eps = s.at_least("eps", s.number("eps", o.eps), 0.0, "use a small non-negative value such as 1e-8");
  o.weight_decay = s.at_least("weight_decay", s.number("weight_decay", o.weight_decay), 0.0,
                              "use a non-negative decay such as 0.01 (0: none)");
  return o;
}

ScheduleSpec resolve_schedule(const JsonSection& s, int64_t max_steps) {
  ScheduleSpec r;
  r.name = s.choice<std::string>("name", "inverse_sqrt",
                                 {{"inverse_sqrt", "inverse_sqrt"},
                                  {"polynomial_decay", "polynomial_decay"},
                                  {"cosine", "cosine"},
                                  {"constant", "constant"}});
  const bool inverse_sqrt = r.name == "inverse_sqrt";
  // Keys per schedule (reference SCHEDULE_DEFAULTS); a key of another schedule gets its own hint.
  const std::vector<std::pair<std::string, std::vector<std::string>>> takes = {
      {"inverse_sqrt", {"warmup_steps", "warmup_init_lr"}},
      {"polynomial_decay", {"warmup_steps", "total_steps", "end_lr", "power"}},
      {"cosine", {"warmup_steps", "total_steps"}},
      {"constant", {}}};
  std::vector<std::string> own = {"name"}, others;
  for (const auto& [name, keys] : takes)
    for (const std::string& key : keys) (name == r.name ? own : others).push_back(key);
  for (const std::string& key : s.keys()) {
    if (std::find(own.begin(), own.end(), key) != own.end()) continue;
    if (std::find(others.begin(), others.end(), key) == others.end()) continue;  // unknown: check_keys below
    std::vector<std::string> owners;
    for (const auto& [name, keys] : takes)
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) owners.push_back(name);
    std::string list;
    for (size_t i = 1; i < own.size(); ++i) list += (i > 1 ? ", " : "") + own[i];
    std::string owner_list;
    for (size_t i = 0; i < owners.size(); ++i) owner_list += (i ? ", " : "") + owners[i];
    s.fail(key, "is not a key of schedule " + r.name,
           r.name + (list.empty() ? " takes no keys" : " takes " + list) + "; " + key + " belongs to " + owner_list);
  }
  s.check_keys(own, true);
  r.warmup_steps = s.integer("warmup_steps", inverse_sqrt ? r.warmup_steps : 0);
  if (inverse_sqrt && r.warmup_steps < 1)
    s.fail("warmup_steps", "must be >= 1 for inverse_sqrt, got " + std::to_string(r.warmup_steps),
           "inverse_sqrt divides by it (fairseq); use e.g. 4000, or schedule name: constant");
  s.at_least("warmup_steps", r.warmup_steps, 0, "use 0 for no warmup");
  r.warmup_init_lr = s.at_least("warmup_init_lr", s.number("warmup_init_lr", r.warmup_init_lr), 0.0,
                                "use a small non-negative rate such as 1e-7");
  if (r.name == "polynomial_decay" || r.name == "cosine")
    r.total_steps = s.at_least("total_steps", s.integer("total_steps", max_steps), 1,
                               "use the step where the decay ends, or leave it out for train.max_steps");
  r.end_lr = s.at_least("end_lr", s.number("end_lr", r.end_lr), 0.0, "use a non-negative final rate such as 0");
  r.power = s.at_least("power", s.number("power", r.power), 0.0, "use a non-negative exponent such as 1");
  return r;
}

TrainSpec resolve_train(const JsonSection& s) {
  s.check_keys({"batch_size", "max_steps", "seed", "optimizer", "schedule", "clip_norm", "eval_every", "test_every",
                "log_every", "eval_batch_size", "update_freq", "threads", "precision"},
               true);
  TrainSpec t;
  t.batch_size = s.at_least("batch_size", s.integer("batch_size", t.batch_size), 1, "use a positive batch such as 8");
  if (!s.has("max_steps"))
    s.fail("max_steps", "is required", "add train.max_steps: N (one step = one batch = one optimizer update)");
  t.max_steps = s.at_least("max_steps", s.integer("max_steps", 0), 1, "use a positive number of updates such as 450");
  t.seed = s.unsigned_integer("seed", t.seed);
  t.clip_norm = s.at_least("clip_norm", s.number("clip_norm", t.clip_norm), 0.0,
                           "use a positive max norm such as 1.0, or 0 for no clipping");
  const std::string every = "use a step count, or 0 for only at the end";
  t.eval_every = s.at_least("eval_every", s.integer("eval_every", t.eval_every), 0, every);
  t.test_every = s.at_least("test_every", s.integer("test_every", t.test_every), 0, every);
  t.log_every = s.at_least("log_every", s.integer("log_every", t.log_every), 0, "use a step count such as 10");
  t.eval_batch_size = s.at_least("eval_batch_size", s.integer("eval_batch_size", t.eval_batch_size), 1,
                                 "use a positive batch such as 16");
  t.update_freq = s.at_least("update_freq", s.integer("update_freq", t.update_freq), 1,
                             "use 1 (an update per batch) or more to accumulate gradients");
  const int64_t threads = s.at_least("threads", s.integer("threads", t.threads), 0,
                                     "use a thread count, or 0 for the runtime's default");
  if (threads > 4096) s.fail("threads", "is " + std::to_string(threads) + ", too many", "use at most the core count");
  t.threads = static_cast<int>(threads);
  t.precision = s.choice<std::string>("precision", t.precision, {{"f32", "f32"}, {"bf16", "bf16"}});
  t.optimizer = resolve_optimizer(s.section("optimizer"));
  t.schedule = resolve_schedule(s.section("schedule"), t.max_steps);
  return t;
}

ExperimentSpec resolve_spec(const json& root, const std::string& path) {
  const JsonSection top(root, "");
  top.check_keys({"model", "data", "train"}, true);
  if (!top.has("model"))
    top.fail("model", "is required", "add a model: section (e.g. d_model, n_layers, n_heads; see quickstart.yaml)");
  ExperimentSpec spec;
  spec.path = path;
  spec.name = std::filesystem::path(path).stem().string();
  const json& model = *top.get("model");
  spec.model = resolve_model_json(model, ModelJsonOptions{true, false, "model"});
  spec.vocab_size_given = model.is_object() && model.contains("vocab_size") && !model["vocab_size"].is_null();
  spec.data = resolve_data(top.section("data"));
  spec.train = resolve_train(top.section("train"));
  if (spec.model.positional == Positional::Learned && spec.data.seq_len > spec.model.max_positions)
    throw ConfigIssue("data.seq_len",
                      std::to_string(spec.data.seq_len) + " exceeds model.max_positions=" +
                          std::to_string(spec.model.max_positions) + " (learned positions have one row per position)",
                      "lower data.seq_len or raise model.max_positions", {"model.max_positions"});
  return spec;
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

/// The reference's key order for the model section (MODEL_DEFAULTS), then anything else.
ordered_json to_ordered(const json& value) { return ordered_json::parse(value.dump()); }

ordered_json ordered_model(const json& model) {
  static const std::vector<std::string> kOrder = {
      "arch",       "vocab_size", "d_model",      "n_layers",     "n_heads",     "max_positions",  "token_mixer",
      "diag_layers", "layers",    "attention",    "channel_mixer", "norm",       "prenorm",        "final_norm",
      "positional", "relative",   "embed_scale",  "embed_norm",   "tie_embeddings", "dropout",     "attention_dropout",
      "head",       "pooling",    "num_classes",  "pooler_dropout"};
  static const std::vector<std::string> kMixerOrder = {"softmax", "linear", "norm_attention", "diag", "performer",
                                                       "cosformer"};
  ordered_json out = ordered_json::object();
  for (const std::string& key : kOrder) {
    if (!model.contains(key)) continue;
    if (key == "attention") {
      ordered_json attention = ordered_json::object();
      for (const std::string& mixer : kMixerOrder)
        if (model[key].contains(mixer)) attention[mixer] = to_ordered(model[key][mixer]);
      out[key] = attention;
    } else if (key == "channel_mixer") {
      const json& cm = model[key];
      out[key] = ordered_json{
          {"type", to_ordered(cm["type"])}, {"d_ff", to_ordered(cm["d_ff"])}, {"activation", to_ordered(cm["activation"])}};
    } else {
      out[key] = to_ordered(model[key]);
    }
  }
  for (const auto& item : model.items())
    if (!out.contains(item.key())) out[item.key()] = to_ordered(item.value());
  return out;
}

ordered_json nullable(const std::string& s) { return s.empty() ? ordered_json(nullptr) : ordered_json(s); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------------------------

ExperimentSpec load_spec(const std::string& path, const std::vector<std::string>& overrides) {
  LoadedSpec loaded = load_yaml_spec(path, false);
  apply_overrides(loaded, overrides);
  try {
    return resolve_spec(loaded.root, path);
  } catch (const ConfigIssue& issue) {
    throw ConfigError(loaded.where.locate(issue) + ": " + issue.what());
  }
}

bool is_whole_spec(const std::string& path) {
  const YAML::Node node = parse_yaml(read_text(path), path);
  return node.IsMap() && (node["data"] || node["train"]);
}

ModelConfig load_model_only(const std::string& path, const std::vector<std::string>& overrides) {
  LoadedSpec loaded = load_yaml_spec(path, true);
  apply_overrides(loaded, overrides);
  try {
    const JsonSection top(loaded.root, "");
    return resolve_model_json(top.get("model") ? *top.get("model") : json(nullptr),
                              ModelJsonOptions{true, false, "model"});
  } catch (const ConfigIssue& issue) {
    throw ConfigError(loaded.where.locate(issue) + ": " + issue.what());
  }
}

std::string spec_to_yaml(const ExperimentSpec& spec) {
  json model = model_config_to_json(spec.model);
  if (!spec.vocab_size_given) model.erase("vocab_size");
  const DataSpec& d = spec.data;
  const TrainSpec& t = spec.train;
  const ScheduleSpec& s = t.schedule;
  ordered_json schedule = {{"name", s.name}};
  if (s.name == "inverse_sqrt") {
    schedule["warmup_steps"] = s.warmup_steps;
    schedule["warmup_init_lr"] = s.warmup_init_lr;
  } else if (s.name == "polynomial_decay") {
    schedule["warmup_steps"] = s.warmup_steps;
    schedule["total_steps"] = s.total_steps;
    schedule["end_lr"] = s.end_lr;
    schedule["power"] = s.power;
  } else if (s.name == "cosine") {
    schedule["warmup_steps"] = s.warmup_steps;
    schedule["total_steps"] = s.total_steps;
  }
  ordered_json root = ordered_json::object();
  root["model"] = ordered_model(model);
  root["data"] = ordered_json{{"train", nullable(d.train)},
                              {"valid", nullable(d.valid)},
                              {"test", nullable(d.test)},
                              {"split_valid_from_train", d.split_valid_from_train},
                              {"seq_len", d.seq_len}};
  root["train"] = ordered_json{
      {"batch_size", t.batch_size},
      {"max_steps", t.max_steps},
      {"seed", t.seed},
      {"optimizer", ordered_json{{"name", t.optimizer.name},
                                 {"lr", t.optimizer.lr},
                                 {"betas", ordered_json::array({t.optimizer.beta1, t.optimizer.beta2})},
                                 {"eps", t.optimizer.eps},
                                 {"weight_decay", t.optimizer.weight_decay}}},
      {"schedule", schedule},
      {"clip_norm", t.clip_norm},
      {"eval_every", t.eval_every},
      {"test_every", t.test_every},
      {"log_every", t.log_every},
      {"eval_batch_size", t.eval_batch_size},
      {"update_freq", t.update_freq},
      {"threads", t.threads},
      {"precision", t.precision}};
  std::string out = "# Resolved spec (transnormer): every default filled in";
  out += spec.path.empty() ? "\n" : "; from " + spec.path + "\n";
  emit_mapping(root, 0, out);
  return out;
}

LrSchedule make_schedule(const ScheduleSpec& schedule, double peak_lr, int64_t max_steps) {
  LrSchedule out;
  if (schedule.name == "inverse_sqrt") out.kind = ScheduleKind::InverseSqrt;
  else if (schedule.name == "polynomial_decay") out.kind = ScheduleKind::PolynomialDecay;
  else if (schedule.name == "cosine") out.kind = ScheduleKind::Cosine;
  else if (schedule.name == "constant") out.kind = ScheduleKind::Constant;
  else
    throw ConfigError("train.schedule.name: expected one of inverse_sqrt, polynomial_decay, cosine, constant, got \"" +
                      schedule.name + "\"; use one of those names");
  if (out.kind == ScheduleKind::InverseSqrt && schedule.warmup_steps < 1)
    throw ConfigError("train.schedule.warmup_steps: must be >= 1 for inverse_sqrt, got " +
                      std::to_string(schedule.warmup_steps) + "; use e.g. 4000");
  out.peak_lr = peak_lr;
  out.warmup_steps = schedule.warmup_steps;
  out.warmup_init_lr = schedule.warmup_init_lr;
  out.total_steps = schedule.total_steps > 0 ? schedule.total_steps : max_steps;
  out.end_lr = schedule.end_lr;
  out.power = schedule.power;
  return out;
}

}  // namespace tn
