#include "experiments/reports/report_table.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "core/error.h"
#include "core/platform/progress.h"
#include "experiments/reports/flat_json.h"

namespace tn {

namespace {
using nlohmann::json;

constexpr const char* kSeed = "train.seed";
const std::set<std::string> kNotCompared = {kSeed, "train.threads"};

template <class T>
bool contains(const std::vector<T>& v, const T& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}
template <class T>
void add_unique(std::vector<T>& v, const T& x) {
  if (!contains(v, x)) v.push_back(x);
}

std::vector<std::string> split_path(const std::string& key) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t dot; (dot = key.find('.', start)) != std::string::npos; start = dot + 1) parts.push_back(key.substr(start, dot - start));
  parts.push_back(key.substr(start));
  return parts;
}

/// The last path component of each key; where two keys share it, as many more components as
/// make them distinct.
std::vector<std::string> short_names(const std::vector<std::string>& keys) {
  std::vector<std::string> out(keys.size());
  std::vector<bool> named(keys.size(), false);
  for (size_t depth = 1; !std::all_of(named.begin(), named.end(), [](bool b) { return b; }); ++depth) {
    std::map<std::string, int> uses;
    std::vector<std::string> suffix(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      const std::vector<std::string> parts = split_path(keys[i]);
      const size_t take = std::min(depth, parts.size());
      for (size_t p = parts.size() - take; p < parts.size(); ++p)
        suffix[i] += (suffix[i].empty() ? "" : ".") + parts[p];
      ++uses[suffix[i]];
    }
    for (size_t i = 0; i < keys.size(); ++i)
      if (!named[i] && (uses[suffix[i]] == 1 || suffix[i] == keys[i])) out[i] = suffix[i], named[i] = true;
  }
  return out;
}

/// Every run's value of every key it has; sweep points carry their overrides (and the sweep's
/// `set`), plain runs their flattened config.
struct Identity {
  std::vector<std::string> keys;                          // the varying keys, in order
  std::vector<std::map<std::string, std::string>> value;  // per run
};

Identity sweep_identity(const ReportInputs& in) {
  Identity id;
  const bool several = in.sources.size() > 1;
  if (several) id.keys.push_back("sweep");
  for (const ReportSource& s : in.sources)
    for (const std::string& axis : s.sweep->axes)
      if (axis != kSeed) add_unique(id.keys, axis);
  // Sweeps are told apart by name, or by their folders when two share a name.
  std::set<std::string> names;
  bool same_names = false;
  for (const ReportSource& s : in.sources) same_names = !names.insert(s.sweep->name).second || same_names;
  auto sweep_label = [&](const ReportSource& s) {
    if (!same_names) return s.sweep->name;
    std::string dir = s.dir;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    return std::filesystem::path(dir).filename().string();
  };
  for (const RunRecord& run : in.runs) {
    std::map<std::string, std::string> v;
    if (several) v["sweep"] = sweep_label(in.sources[run.source]);
    for (const auto& item : run.overrides.items()) {
      if (item.key() == kSeed || item.key().rfind("paper.", 0) == 0) continue;  // paper: not the experiment
      add_unique(id.keys, item.key());
      v[item.key()] = leaf_text(item.value());
    }
    id.value.push_back(std::move(v));
  }
  return id;
}

Identity config_identity(const ReportInputs& in) {
  Identity id;
  std::vector<std::string> order;
  std::vector<bool> has_config;
  for (const RunRecord& run : in.runs) {
    std::map<std::string, std::string> v;
    for (const auto& [key, value] : run.flat_config) {
      if (kNotCompared.count(key)) continue;
      add_unique(order, key);
      v[key] = leaf_text(value);
    }
    has_config.push_back(!run.flat_config.empty());
    if (run.flat_config.empty() && run.overrides.is_object()) {  // a sweep point that wrote no config
      const SweepIndex& sweep = *in.sources[run.source].sweep;
      for (const auto& item : sweep.set.items()) v[item.key()] = leaf_text(item.value());
      for (const auto& item : run.overrides.items())
        if (item.key() != kSeed) v[item.key()] = leaf_text(item.value());
    }
    id.value.push_back(std::move(v));
  }
  for (const std::string& key : order) {
    std::set<std::string> seen;
    for (size_t r = 0; r < in.runs.size(); ++r) {
      if (!has_config[r]) continue;
      const auto it = id.value[r].find(key);
      seen.insert(it == id.value[r].end() ? std::string("\x01") : it->second);
    }
    if (seen.size() > 1) id.keys.push_back(key);
  }
  // Runs without a config know only their overrides: other keys are unknown ("?").
  for (size_t r = 0; r < in.runs.size(); ++r)
    if (!has_config[r])
      for (const std::string& key : id.keys)
        if (!id.value[r].count(key)) id.value[r][key] = "?";
  return id;
}

/// A sweep point that does not override a key shows the value its runs' config.yaml has (the
/// base's); the label keeps naming only the point's own overrides.
void fill_from_configs(const ReportInputs& in, const ReportTable& t, ReportRow& row) {
  for (size_t i = 0; i < t.keys.size(); ++i) {
    if (!row.values[i].empty()) continue;
    for (size_t r : row.runs) {
      const auto& flat = in.runs[r].flat_config;
      const auto it = std::find_if(flat.begin(), flat.end(), [&](const auto& kv) { return kv.first == t.keys[i]; });
      if (it != flat.end()) {
        row.values[i] = leaf_text(it->second);
        break;
      }
    }
  }
}

/// A row's value of a config key: the first of its runs whose config.yaml has it ("" if none).
std::string config_value(const ReportInputs& in, const ReportRow& row, const std::string& key) {
  for (size_t r : row.runs) {
    const auto& flat = in.runs[r].flat_config;
    const auto it = std::find_if(flat.begin(), flat.end(), [&](const auto& kv) { return kv.first == key; });
    if (it != flat.end()) return leaf_text(it->second);
  }
  return "";
}

/// Sweep points that share their overrides but not their base spec (points: [{name, base}])
/// differ in keys no override names: adds each config key in which two such rows differ, so
/// that --by, the tables and the plots can use it (model.token_mixer of t1, t2 and softmax).
/// Whether `key` is one setting per sweep (the same in all its runs: its --set or set:) that
/// differs between the sweeps of the report (a batch size one sweep changed): a column, so rows of
/// different settings are not read as differing in their axes alone.
bool differs_between_sweeps(const ReportInputs& in, const ReportTable& t, const std::string& key) {
  if (in.sources.size() < 2) return false;
  std::map<size_t, std::set<std::string>> per_source;
  std::set<std::string> all;
  for (const ReportRow& row : t.rows)
    for (size_t r : row.runs) {
      const auto& flat = in.runs[r].flat_config;
      const auto it = std::find_if(flat.begin(), flat.end(), [&](const auto& kv) { return kv.first == key; });
      const std::string v = it == flat.end() ? "" : leaf_text(it->second);
      per_source[in.runs[r].source].insert(v);
      all.insert(v);
    }
  return all.size() > 1 && std::all_of(per_source.begin(), per_source.end(), [](const auto& s) { return s.second.size() == 1; });
}

void add_base_keys(const ReportInputs& in, ReportTable& t) {
  std::vector<std::string> candidates;
  for (const ReportRow& row : t.rows)
    for (size_t r : row.runs)
      for (const auto& [key, value] : in.runs[r].flat_config)
        if (!kNotCompared.count(key) && !contains(t.keys, key)) add_unique(candidates, key);
  std::vector<std::vector<std::string>> overrides;  // each row's values of the override keys
  for (const ReportRow& row : t.rows) overrides.push_back(row.values);
  for (const std::string& key : candidates) {
    std::map<std::vector<std::string>, std::string> seen;  // override values -> the key's value
    bool differs = false;
    for (size_t i = 0; i < t.rows.size(); ++i) {
      const std::string v = config_value(in, t.rows[i], key);
      if (v.empty()) continue;
      const auto [it, fresh] = seen.emplace(overrides[i], v);
      differs = differs || it->second != v;
    }
    if (!differs && !differs_between_sweeps(in, t, key)) continue;
    t.keys.push_back(key);
    for (ReportRow& row : t.rows) row.values.push_back(config_value(in, row, key));
  }
  t.short_keys = short_names(t.keys);
}

/// "split.metric" names in report order: valid, test, then other splits alphabetically; within
/// a split in the order first seen.
std::vector<std::string> ordered_metrics(std::vector<std::string> names) {
  auto rank = [](const std::string& name) {
    const std::string split = name.substr(0, name.find('.'));
    return split == "valid" ? 0 : split == "test" ? 1 : 2;
  };
  std::stable_sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
    const int ra = rank(a), rb = rank(b);
    if (ra != rb) return ra < rb;
    if (ra == 2) return a.substr(0, a.find('.')) < b.substr(0, b.find('.'));
    return false;
  });
  return names;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

void choose_metrics(const ReportInputs& in, const TableOptions& options, ReportTable& t) {
  std::vector<std::string> finals, counts, evals;
  for (const RunRecord& run : in.runs) {
    if (run.summary)
      for (const auto& [split, metrics] : run.summary->final)
        for (const std::string& m : metrics.names()) add_unique(finals, split + "." + m);
    for (const auto& [name, curve] : run.evals) add_unique(evals, name);
    for (const std::string& c : run.count_metrics) add_unique(counts, c);
  }
  t.available = finals;
  for (const std::string& e : evals) add_unique(t.available, e);
  t.available = ordered_metrics(t.available);
  if (options.metrics.empty()) {
    for (const std::string& m : ordered_metrics(finals.empty() ? evals : finals))
      if (!contains(counts, m)) t.metrics.push_back(m);
    return;
  }
  for (const std::string& m : options.metrics) {
    if (!contains(t.available, m))
      throw ConfigError("--metrics: the runs have no metric \"" + m + "\"; " +
                        (t.available.empty() ? std::string("they hold none yet (no summary.json, no evaluation in metrics.jsonl)")
                                             : "the available names are " + join(t.available)));
    add_unique(t.metrics, m);
  }
}

/// "step 2500/6000 (42 %), ETA 0:55:00" of a run that is training, waits or was stopped, from
/// its last training-log line and config.yaml; "" before its first line, without max_steps, or
/// for a run that ended (done, failed, diverged).
std::string run_progress(const RunRecord& run) {
  const bool unfinished =
      run.state == "running" || run.state == "pending" || run.state == "incomplete" || run.state == "stopped";
  if (!unfinished || run.logged_step <= 0 || run.max_steps <= 0) return "";
  const int64_t step = std::min(run.logged_step, run.max_steps);
  std::string out = "step " + std::to_string(step) + "/" + std::to_string(run.max_steps) + " (" +
                    std::to_string(100 * step / run.max_steps) + " %)";
  if (run.state == "running" && run.logged_train_s > 0)
    out += ", ETA " + format_duration(run.logged_train_s / static_cast<double>(run.logged_step) *
                                      static_cast<double>(run.max_steps - step));
  return out;
}

std::string row_state(const ReportInputs& in, const ReportRow& row) {
  std::vector<std::string> states;
  std::map<std::string, size_t> count;
  for (size_t r : row.runs) {
    const std::string s = in.runs[r].done() ? "done" : in.runs[r].state;
    add_unique(states, s);
    ++count[s];
  }
  if (count["done"] == row.runs.size()) return "done";
  const size_t n = row.runs.size();
  std::string out;
  for (const std::string& s : states) {
    if (s == "done") continue;
    out += (out.empty() ? "" : ", ") + s + " (" + std::to_string(count[s]) + " of " + std::to_string(n) +
           (n == 1 ? " seed)" : " seeds)");
  }
  std::string progress;  // of each run not done, in the row's order
  for (size_t r : row.runs)
    if (const std::string p = run_progress(in.runs[r]); !p.empty()) progress += (progress.empty() ? "" : "; ") + p;
  return progress.empty() ? out : out + ": " + progress;
}

/// Warns when two done runs of one row share a seed: both are pooled, so its spread is not only
/// across seeds (a run copied or rerun into a second folder).
void warn_repeated_seeds(const ReportInputs& in, const ReportRow& row) {
  std::map<uint64_t, std::string> first;
  for (size_t r : row.runs) {
    const RunRecord& run = in.runs[r];
    if (!run.done() || !run.seed) continue;
    const auto [it, fresh] = first.emplace(*run.seed, run.dir);
    if (!fresh)
      spdlog::warn("report: row \"{}\" pools two runs of seed {} ({} and {}); its mean and std count both: "
                   "give the report one of them",
                   row.label, *run.seed, it->second, run.dir);
  }
}

/// The settings in which a row's done runs differ ("train.max_steps 400, 420"): a point of a sweep
/// resumed by hand to more steps is pooled with its seeds; "" when they agree (seed and threads aside).
std::string mixed_settings(const ReportInputs& in, const ReportRow& row) {
  std::map<std::string, std::vector<std::string>> values;  // key -> distinct values, in run order
  for (size_t r : row.runs) {
    const RunRecord& run = in.runs[r];
    if (!run.done()) continue;
    for (const auto& [key, value] : run.flat_config) {
      if (kNotCompared.count(key)) continue;
      std::vector<std::string>& seen = values[key];
      if (!contains(seen, leaf_text(value))) seen.push_back(leaf_text(value));
    }
  }
  std::string out;
  for (const auto& [key, seen] : values) {
    if (seen.size() < 2) continue;
    out += (out.empty() ? "" : "; ") + key + " ";
    for (size_t i = 0; i < seen.size(); ++i) out += (i ? ", " : "") + seen[i];
  }
  return out;
}

/// What a row's done sweep runs were trained to beyond what their sweep asks (a point resumed by
/// hand to more steps): "train.max_steps 80 (the sweep's 40)"; "" when none was.
std::string beyond_sweep(const ReportInputs& in, const ReportRow& row) {
  std::string out;
  for (size_t r : row.runs) {
    const RunRecord& run = in.runs[r];
    const ReportSource& source = in.sources[run.source];
    if (!run.done() || !source.sweep) continue;
    const std::string dir = std::filesystem::path(run.dir).lexically_relative(source.dir).generic_string();
    const PointRecord* point = source.sweep->find(dir);
    if (!point || !point->spec.is_object() || !point->spec.contains("train")) continue;
    for (const char* key : {"max_steps"}) {
      const nlohmann::json& asked = point->spec["train"].value(key, nlohmann::json());
      const auto it = std::find_if(run.flat_config.begin(), run.flat_config.end(),
                                   [&](const auto& kv) { return kv.first == std::string("train.") + key; });
      if (asked.is_null() || it == run.flat_config.end() || it->second == asked) continue;
      const std::string text = "train." + std::string(key) + " " + leaf_text(it->second) + " (the sweep's " +
                               leaf_text(asked) + ")";
      if (out.find(text) == std::string::npos) out += (out.empty() ? "" : "; ") + text;
    }
  }
  return out;
}

void pool_row(const ReportInputs& in, ReportTable& t, ReportRow& row) {
  warn_repeated_seeds(in, row);
  std::map<std::string, std::vector<double>> metric, analysis;
  std::vector<double> params, speed, wall;
  for (size_t r : row.runs) {
    const RunRecord& run = in.runs[r];
    for (const auto& [name, value] : run.paper)
      if (!row.paper.count(name)) row.paper[name] = value;
    if (!run.done()) continue;
    ++row.done;
    for (const std::string& m : t.metrics) {
      const auto v = run.final_metric(m);
      if (!v) continue;
      // A non-finite value (null in summary.json: a NaN evaluation) cannot be averaged: left out
      // of n, said once per run.
      if (!std::isfinite(*v)) {
        spdlog::warn("report: {}: {} is not a finite number (null in summary.json); left out of its row's mean",
                     run.dir, m);
        continue;
      }
      metric[m].push_back(*v);
    }
    for (const std::string& m : t.metrics) {
      if (row.baseline.count(m)) continue;
      const size_t dot = m.find('.');
      if (dot == std::string::npos) continue;
      const std::string suffix = "_" + m.substr(0, dot) + "_" + m.substr(dot + 1);  // "_valid_accuracy"
      for (const auto& [name, value] : run.summary->baselines)
        if (value && name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
            name.find('_') == name.size() - suffix.size()) {
          row.baseline[m] = *value;
          break;
        }
    }
    for (const auto& [name, value] : run.analysis) {
      add_unique(t.analysis, name);
      analysis[name].push_back(value);
    }
    params.push_back(static_cast<double>(run.summary->params));
    speed.push_back(run.summary->train.tokens_per_s);
    // A plain run: its process's wall clock, or, when resumed (total_s covers its last session
    // only), the training and evaluation seconds of all its sessions where they are more.
    const TrainTotals& t = run.summary->train;
    wall.push_back(run.sweep_wall_s ? *run.sweep_wall_s : std::max(t.total_s, t.wall_s + t.eval_s));
    if (run.sweep_jobs) row.speed_jobs = std::max(row.speed_jobs, *run.sweep_jobs);
    row.ranks = std::max(row.ranks, run.summary->train.ranks);
    row.threads = std::max(row.threads, run.summary->train.threads);
  }
  for (const std::string& m : t.metrics) row.metrics[m] = pool(metric[m]);
  for (const auto& [name, values] : analysis) row.analysis[name] = pool(values);
  row.params = pool(params);
  row.tokens_per_s = pool(speed);
  row.wall_s = pool(wall);
  row.state = row_state(in, row);
  if (const std::string mixed = mixed_settings(in, row); !mixed.empty()) {
    spdlog::warn("report: row \"{}\" pools runs that differ in {}; its mean and std mix them", row.label, mixed);
    row.state += " (pooled runs differ: " + mixed + ")";
  }
  if (const std::string beyond = beyond_sweep(in, row); !beyond.empty()) {
    spdlog::warn("report: row \"{}\" was trained beyond its sweep ({}): it is not compared on equal terms with "
                 "the sweep's other points", row.label, beyond);
    row.state += " (trained beyond the sweep: " + beyond + ")";
  }
}

/// The index of the key `name` names (itself, a short name, or the one key ending in ".name") for
/// the option `flag`; ConfigError listing the keys otherwise.
size_t resolve_key(const ReportTable& t, const std::string& name, const std::string& flag) {
  for (size_t i = 0; i < t.keys.size(); ++i)
    if (t.keys[i] == name || t.short_keys[i] == name) return i;
  std::vector<size_t> matches;
  for (size_t i = 0; i < t.keys.size(); ++i) {
    const std::string& k = t.keys[i];
    if (k.size() > name.size() && k.compare(k.size() - name.size(), name.size(), name) == 0 &&
        k[k.size() - name.size() - 1] == '.')
      matches.push_back(i);
  }
  if (matches.size() == 1) return matches[0];
  throw ConfigError(flag + " " + name + ": " + (matches.empty() ? "not a key the runs differ in" : "ambiguous") +
                    "; the keys are " + (t.keys.empty() ? std::string("none (the runs differ in no key)") : join(t.keys)));
}

/// The full key `axis` names: itself, a short name, or the one key ending in ".axis".
std::string resolve_by(const ReportTable& t, const std::string& axis) {
  for (size_t i = 0; i < t.keys.size(); ++i)
    if (t.keys[i] == axis || t.short_keys[i] == axis) return t.keys[i];
  std::vector<std::string> matches;
  for (const std::string& k : t.keys)
    if (k.size() > axis.size() && k.compare(k.size() - axis.size(), axis.size(), axis) == 0 &&
        k[k.size() - axis.size() - 1] == '.')
      matches.push_back(k);
  if (matches.size() == 1) return matches[0];
  if (t.keys.empty())
    throw ConfigError("--by " + axis + ": the runs differ in no key but the seed, so there is no axis to order by");
  throw ConfigError("--by " + axis + ": " + (matches.empty() ? "not a key the runs differ in" : "ambiguous") +
                    "; the keys are " + join(t.keys));
}

/// Whether the values of keys a and b pair one-to-one over the rows, and either the pairing repeats
/// (fewer distinct values than rows) or b's values are lists or mappings: b is a relabelling of a,
/// such as a resolved model.channel_mixer.d_ff beside model.d_model, or the resolved per-layer
/// model.layers list beside model.diag_layers (a list never names a row better than its source).
bool relabels(const ReportTable& t, size_t a, size_t b) {
  std::map<std::string, std::string> ab, ba;
  bool structured = true;
  for (const ReportRow& row : t.rows) {
    const auto [i, fresh_a] = ab.emplace(row.values[a], row.values[b]);
    const auto [j, fresh_b] = ba.emplace(row.values[b], row.values[a]);
    if (i->second != row.values[b] || j->second != row.values[a]) return false;
    const std::string& v = row.values[b];
    structured = structured && !v.empty() && (v.front() == '[' || v.front() == '{');
  }
  return ab.size() < t.rows.size() || structured;
}

/// The keys that name the rows: all of them for sweeps; for plain runs, without keys that only
/// relabel another key (tried deepest path first; never the --by key).
std::vector<std::string> label_keys(const ReportTable& t, bool drop_relabels) {
  std::vector<size_t> keep(t.keys.size());
  for (size_t i = 0; i < keep.size(); ++i) keep[i] = i;
  if (drop_relabels) {
    std::vector<size_t> order = keep;
    auto depth = [&](size_t i) { return std::count(t.keys[i].begin(), t.keys[i].end(), '.'); };
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return depth(a) != depth(b) ? depth(a) > depth(b) : a > b;
    });
    for (size_t k : order) {
      if (t.keys[k] == t.by) continue;
      if (std::any_of(keep.begin(), keep.end(), [&](size_t j) { return j != k && relabels(t, j, k); }))
        keep.erase(std::find(keep.begin(), keep.end(), k));
    }
  }
  std::vector<std::string> out;
  for (size_t i : keep) out.push_back(t.keys[i]);
  return out;
}

void order_rows(ReportTable& t) {
  const size_t k = std::find(t.keys.begin(), t.keys.end(), t.by) - t.keys.begin();
  t.by_numeric = true;
  for (const ReportRow& row : t.rows) {
    double v;
    if (!parse_number(row.values[k], v)) t.by_numeric = false;
  }
  std::stable_sort(t.rows.begin(), t.rows.end(), [&](const ReportRow& a, const ReportRow& b) {
    if (t.by_numeric) {
      double x = 0, y = 0;
      parse_number(a.values[k], x);
      parse_number(b.values[k], y);
      return x < y;
    }
    return a.values[k] < b.values[k];
  });
}
/// The name part of a sweep point's name: its words before the first "key=value" ("t1" of
/// "t1 seed=2"; "t1 block_size=32" of a named point crossed with a grid keeps only "t1", the grid
/// values label the columns; "t1" of a point without axes). "" for points named by their
/// overrides only.
std::string named_point(const std::string& point) {
  const size_t eq = point.find('=');
  if (eq == std::string::npos) return point;
  const size_t space = point.rfind(' ', eq);
  return space == std::string::npos ? "" : point.substr(0, space);
}

/// The folders of a row's runs ("pathfinder6_t1"; "a, b" for runs pooled from two folders).
std::string folder_label(const ReportInputs& in, const ReportRow& row) {
  std::vector<std::string> names;
  for (size_t r : row.runs) {
    std::string dir = in.runs[r].dir;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    const std::string name = std::filesystem::path(dir).filename().string();
    if (!name.empty() && !contains(names, name)) names.push_back(name);
  }
  return join(names);
}

/// Rows that share a label (a named point crossed with a grid is labelled by its name alone) get
/// the keys in which they differ appended: "cola" and "cola" become "cola init_from=runs/small/blm"
/// and "cola init_from=null", so the highlights and plots name rows a reader can tell apart.
void disambiguate_labels(ReportTable& t) {
  std::map<std::string, std::vector<size_t>> by_label;
  for (size_t r = 0; r < t.rows.size(); ++r) by_label[t.rows[r].label].push_back(r);
  for (const auto& [label, rows] : by_label) {
    if (rows.size() < 2) continue;
    std::vector<std::string> suffix(rows.size());
    for (size_t k = 0; k < t.keys.size(); ++k) {
      const std::string& first = t.rows[rows.front()].values[k];
      if (std::all_of(rows.begin(), rows.end(), [&](size_t r) { return t.rows[r].values[k] == first; })) continue;
      for (size_t i = 0; i < rows.size(); ++i) {
        const std::string& v = t.rows[rows[i]].values[k];
        suffix[i] += " " + t.short_keys[k] + "=" + (v.empty() ? "(unset)" : v);
      }
    }
    for (size_t i = 0; i < rows.size(); ++i) t.rows[rows[i]].label += suffix[i];
  }
}

/// One row per distinct set of identity values (and named point), each listing its runs.
void group_rows(const ReportInputs& in, const Identity& id, ReportTable& t) {
  std::map<std::vector<std::string>, size_t> row_of;
  for (size_t r = 0; r < in.runs.size(); ++r) {
    std::vector<std::string> values;
    for (const std::string& key : t.keys) {
      const auto it = id.value[r].find(key);
      values.push_back(it == id.value[r].end() ? "" : it->second);
    }
    // Named points with the same overrides differ in their base spec (points[i].base): rows apart.
    std::vector<std::string> row_key = values;
    row_key.push_back(named_point(in.runs[r].point));
    auto [it, fresh] = row_of.emplace(row_key, t.rows.size());
    if (fresh) {
      ReportRow row;
      row.values = values;
      t.rows.push_back(std::move(row));
    }
    t.rows[it->second].runs.push_back(r);
  }
}

/// The keys that name rows (--label, else label_keys) and the key columns shown (--columns, else all).
void choose_label_and_columns(const TableOptions& options, bool sweeps_only, ReportTable& t) {
  t.label_keys = label_keys(t, !sweeps_only);
  const bool by_dir = options.label.size() == 1 && options.label[0] == "dir";
  if (!options.label.empty() && !by_dir) {
    t.label_keys.clear();
    for (const std::string& name : options.label) t.label_keys.push_back(t.keys[resolve_key(t, name, "--label")]);
  }
  for (size_t i = 0; i < t.keys.size(); ++i) t.columns.push_back(i);
  if (!options.columns.empty()) {
    t.columns.clear();
    for (const std::string& name : options.columns) t.columns.push_back(resolve_key(t, name, "--columns"));
  }
}

/// Names `row` and fills the values its sweep points inherit. A sweep's point is named by the keys
/// it varies, or (points: [{name: t1, ...}]) by its name; run directories given alone by the keys
/// they differ in when those are at most two, else by their folders, as their author named them
/// (four keys make a label no one reads); with none of these, by its sweep or folder.
void label_row(const ReportInputs& in, const TableOptions& options, bool sweeps_only, const ReportTable& t,
               ReportRow& row) {
  const RunRecord& first_run = in.runs[row.runs.front()];
  const bool by_dir = options.label.size() == 1 && options.label[0] == "dir";
  const bool plain = !in.sources[first_run.source].sweep;
  const std::string named = options.label.empty() ? named_point(first_run.point) : "";
  // --label names keys to read: a point that inherits one from its base is named by that value.
  if (sweeps_only && !options.label.empty()) fill_from_configs(in, t, row);
  if (by_dir || (plain && options.label.empty() && t.label_keys.size() > 2)) {
    row.label = folder_label(in, row);
  } else {
    for (size_t i = 0; i < t.keys.size() && named.empty(); ++i) {
      if (row.values[i].empty() || !contains(t.label_keys, t.keys[i])) continue;
      if (!row.label.empty()) row.label += ' ';
      row.label += t.short_keys[i] + "=" + row.values[i];
    }
    if (!named.empty()) row.label = named;
  }
  if (sweeps_only) fill_from_configs(in, t, row);
  if (row.label.empty()) {
    const ReportSource& source = in.sources[first_run.source];
    std::string dir = first_run.dir;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    row.label = source.sweep ? source.sweep->name : std::filesystem::path(dir).filename().string();
    if (row.label.empty()) row.label = "all runs";
  }
}

}  // namespace

ReportTable build_table(const ReportInputs& in, const TableOptions& options) {
  ReportTable t;
  const bool sweeps_only = std::all_of(in.sources.begin(), in.sources.end(), [](const ReportSource& s) { return s.sweep.has_value(); });
  const Identity id = sweeps_only ? sweep_identity(in) : config_identity(in);
  t.keys = id.keys;
  t.short_keys = short_names(t.keys);
  choose_metrics(in, options, t);
  group_rows(in, id, t);
  if (sweeps_only) add_base_keys(in, t);
  if (!options.by.empty()) t.by = resolve_by(t, options.by);
  choose_label_and_columns(options, sweeps_only, t);
  t.sweep_order = !sweeps_only ? std::any_of(in.sources.begin(), in.sources.end(),
                                             [](const ReportSource& s) { return s.sweep.has_value(); })
                               : true;
  for (ReportRow& row : t.rows) {
    label_row(in, options, sweeps_only, t, row);
    pool_row(in, t, row);
  }
  disambiguate_labels(t);
  for (const std::string& m : t.metrics)
    if (std::any_of(t.rows.begin(), t.rows.end(), [&](const ReportRow& row) { return row.paper.count(m) > 0; }))
      t.paper_metrics.push_back(m);
  for (const std::string& m : t.metrics)
    if (std::any_of(t.rows.begin(), t.rows.end(), [&](const ReportRow& row) { return row.baseline.count(m) > 0; }))
      t.baseline_metrics.push_back(m);
  if (!t.by.empty()) order_rows(t);
  return t;
}

}  // namespace tn
