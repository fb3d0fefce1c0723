#include "experiments/spec/spec.h"

#include <algorithm>
#include <limits>
#include <filesystem>
#include <nlohmann/json.hpp>

#include <spdlog/fmt/fmt.h>

#include "core/platform/config/json_section.h"
#include "core/error.h"
#include "experiments/outputs/metrics.h"
#include "data/readers/registry.h"
#include "experiments/spec/spec_yaml.h"
#include "layers/config/model_config_json.h"

namespace tn {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

template <class E>
using Names = std::vector<std::pair<std::string, E>>;

const Names<ScheduleKind> kSchedules = {{"inverse_sqrt", ScheduleKind::InverseSqrt},
                                        {"polynomial_decay", ScheduleKind::PolynomialDecay},
                                        {"cosine", ScheduleKind::Cosine},
                                        {"constant", ScheduleKind::Constant}};
const Names<Precision> kPrecisions = {{"f32", Precision::F32}, {"bf16", Precision::BF16}};

// ---------------------------------------------------------------------------------------------
// train: (the reference's resolve_run_spec)
// ---------------------------------------------------------------------------------------------

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
  r.kind = s.choice("name", r.kind, kSchedules);
  const std::string name = to_string(r.kind);
  const bool inverse_sqrt = r.kind == ScheduleKind::InverseSqrt;
  // Keys per schedule (reference SCHEDULE_DEFAULTS); a key of another schedule gets its own hint.
  const std::vector<std::pair<std::string, std::vector<std::string>>> takes = {
      {"inverse_sqrt", {"warmup_steps", "warmup_init_lr"}},
      {"polynomial_decay", {"warmup_steps", "total_steps", "end_lr", "power"}},
      {"cosine", {"warmup_steps", "total_steps"}},
      {"constant", {}}};
  std::vector<std::string> own = {"name"}, others;
  for (const auto& [entry_name, keys] : takes)
    for (const std::string& key : keys) (entry_name == name ? own : others).push_back(key);
  for (const std::string& key : s.keys()) {
    if (std::find(own.begin(), own.end(), key) != own.end()) continue;
    if (std::find(others.begin(), others.end(), key) == others.end()) continue;  // unknown: check_keys below
    std::vector<std::string> owners;
    for (const auto& [owner, keys] : takes)
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) owners.push_back(owner);
    std::string list;
    for (size_t i = 1; i < own.size(); ++i) list += (i > 1 ? ", " : "") + own[i];
    std::string owner_list;
    for (size_t i = 0; i < owners.size(); ++i) owner_list += (i ? ", " : "") + owners[i];
    s.fail(key, "is not a key of schedule " + name,
           name + (list.empty() ? " takes no keys" : " takes " + list) + "; " + key + " belongs to " + owner_list);
  }
  s.check_keys(own, true);
  r.warmup_steps = s.integer("warmup_steps", inverse_sqrt ? r.warmup_steps : 0);
  if (inverse_sqrt && r.warmup_steps < 1)
    s.fail("warmup_steps", "must be >= 1 for inverse_sqrt, got " + std::to_string(r.warmup_steps),
           "inverse_sqrt divides by it (fairseq); use e.g. 4000, or schedule name: constant");
  s.at_least("warmup_steps", r.warmup_steps, 0, "use 0 for no warmup");
  r.warmup_init_lr = s.at_least("warmup_init_lr", s.number("warmup_init_lr", r.warmup_init_lr), 0.0,
                                "use a small non-negative rate such as 1e-7");
  if (r.kind == ScheduleKind::PolynomialDecay || r.kind == ScheduleKind::Cosine)
    r.total_steps = s.at_least("total_steps", s.integer("total_steps", max_steps), 1,
                               "use the step where the decay ends, or leave it out for train.max_steps");
  r.end_lr = s.at_least("end_lr", s.number("end_lr", r.end_lr), 0.0, "use a non-negative final rate such as 0");
  r.power = s.at_least("power", s.number("power", r.power), 0.0, "use a non-negative exponent such as 1");
  return r;
}


TrainSpec::Checkpoint resolve_checkpoint(const JsonSection& s) {
  s.check_keys({"best_metric", "mode"}, true);
  TrainSpec::Checkpoint c;
  if (!s.has("best_metric")) {
    if (s.has("mode")) s.fail("mode", "has no metric to apply to", "set best_metric too (e.g. valid.accuracy)");
    return c;
  }
  c.best_metric = s.string("best_metric", "");
  if (c.best_metric.rfind("valid.", 0) != 0 || c.best_metric.size() <= 6)
    s.fail("best_metric", "is \"" + c.best_metric + "\", not a validation metric",
           "use valid.<metric> (the split checkpoints are written with), e.g. valid.accuracy or valid.ppl");
  static const Names<bool> modes = {{"min", false}, {"max", true}};
  c.maximize = s.choice("mode", !lower_is_better(c.best_metric), modes);
  return c;
}

TrainSpec resolve_train(const JsonSection& s) {
  s.check_keys({"batch_size", "max_steps", "seed", "optimizer", "schedule", "clip_norm", "eval_every", "test_every",
                "log_every", "eval_batch_size", "update_freq", "threads", "precision", "analysis", "init_from",
                "checkpoint", "patience", "limit_eval_batches"},
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
  if (const nlohmann::json* limit = s.find("limit_eval_batches"); limit && !limit->is_null()) {
    t.limit_eval_batches = s.at_least("limit_eval_batches", s.integer("limit_eval_batches", 0), 1,
                                      "use a number of batches such as 2, or null for every batch");
    s.at_most("limit_eval_batches", t.limit_eval_batches, int64_t{1} << 40, "use null for every batch");
  }
  t.update_freq = s.at_least("update_freq", s.integer("update_freq", t.update_freq), 1,
                             "use 1 (an update per batch) or more to accumulate gradients");
  s.at_most("update_freq", t.update_freq, kMaxUpdateFreq,  // a step holds its update_freq batches at once
            "accumulate at most 4096 batches a step: raise train.batch_size instead, e.g. update_freq: 16");
  const int64_t threads = s.at_least("threads", s.integer("threads", t.threads), 0,
                                     "use a thread count, or 0 for the runtime's default");
  if (threads > 4096) s.fail("threads", "is " + std::to_string(threads) + ", too many", "use at most the core count");
  t.threads = static_cast<int>(threads);
  t.precision = s.choice("precision", t.precision, kPrecisions);
  t.optimizer = resolve_optimizer(s.section("optimizer"));
  t.schedule = resolve_schedule(s.section("schedule"), t.max_steps);
  const JsonSection analysis = s.section("analysis");
  analysis.check_keys({"grad_stats"}, true);
  t.analysis.grad_stats = analysis.boolean("grad_stats", t.analysis.grad_stats);
  if (s.has("init_from")) {
    t.init_from = s.string("init_from", "");
    if (t.init_from.empty())
      s.fail("init_from", "is empty", "name a run directory or a checkpoint.safetensors, or remove the key");
  }
  t.checkpoint = resolve_checkpoint(s.section("checkpoint"));
  t.patience = s.at_least("patience", s.integer("patience", t.patience), 0,
                          "use the number of validations without improvement to stop after, or 0 for never");
  if (t.patience > 0 && t.checkpoint.best_metric.empty())
    s.fail("patience", "needs a metric to watch",
           "set train.checkpoint.best_metric (e.g. valid.accuracy, valid.ppl), or remove train.patience");
  return t;
}

/// `paper:` values: numbers, under dotted names or nested mappings ({test: {ppl: 31.01}}).
void flatten_paper(const JsonSection& s, const std::string& prefix, std::map<std::string, double>& out) {
  for (const std::string& key : s.keys()) {
    const json* v = s.get(key);
    if (!v) continue;
    if (v->is_object()) {
      flatten_paper(s.section(key), prefix + key + ".", out);
    } else {
      out[prefix + key] = s.number(key, 0);
    }
  }
}

std::map<std::string, double> resolve_paper(const JsonSection& s) {
  std::map<std::string, double> out;
  flatten_paper(s, "", out);
  return out;
}

/// `task:` a name, or a mapping {name, options...}: the name and the entry's typed options.
void resolve_task(const JsonSection& top, ExperimentSpec& spec) {
  Names<const TaskSchema*> tasks;
  for (const TaskSchema& schema : task_schemas()) tasks.emplace_back(std::string(schema.name), &schema);
  const json* value = top.get("task");
  const bool mapping = value && value->is_object();
  static const json kNoOptions = json::object();  // JsonSection keeps a pointer: no temporary
  const JsonSection section = mapping ? top.section("task") : JsonSection(kNoOptions, "task");
  if (mapping && !section.has("name"))
    section.fail("name", "is required", "name the task (e.g. name: sequence_classification)");
  const TaskSchema* entry = mapping ? section.choice("name", &task_schemas().front(), tasks)
                                    : top.choice("task", &task_schemas().front(), tasks);
  spec.task = std::string(entry->name);
  if (entry->options) {
    spec.task_options = entry->options(section);
  } else if (mapping) {
    section.check_keys({"name"}, true);
  }
}

ExperimentSpec resolve_spec(const json& root, const std::string& path) {
  const JsonSection top(root, "");
  if (top.has("defaults"))  // Hydra's composition list
    top.fail("defaults", "is not a key of a spec", "start from another spec with base: OTHER.yaml (its keys, then yours)");
  top.check_keys({"base", "task", "model", "data", "train", "paper"}, true);
  if (!top.has("model"))
    top.fail("model", "is required", "add a model: section (e.g. d_model, n_layers, n_heads; see quickstart.yaml)");
  ExperimentSpec spec;
  spec.path = path;
  spec.name = std::filesystem::path(path).stem().string();
  resolve_task(top, spec);
  const json& model = *top.get("model");
  spec.model = resolve_model_json(model, ModelJsonOptions{true, false, "model"});
  spec.vocab_size_given = model.is_object() && model.contains("vocab_size") && !model["vocab_size"].is_null();
  spec.num_classes_given = model.is_object() && model.contains("num_classes") && !model["num_classes"].is_null();
  spec.data = resolve_data_spec(top.section("data"));
  spec.train = resolve_train(top.section("train"));
  spec.paper = resolve_paper(top.section("paper"));
  const int64_t seq_len = spec.data->tokens_per_sample();
  if (spec.model.positional == Positional::Learned && seq_len > spec.model.max_positions) {
    const std::string key = spec.data->length_key().empty() ? "" : "data." + spec.data->length_key();
    throw ConfigIssue(key.empty() ? "model.max_positions" : key,
                      (key.empty() ? "the data's " + std::to_string(seq_len) + " positions exceed " : std::to_string(seq_len) + " exceeds ") +
                          "model.max_positions=" + std::to_string(spec.model.max_positions) +
                          " (learned positions have one row per position)",
                      key.empty() ? "raise model.max_positions to " + std::to_string(seq_len)
                                  : "lower " + key + " or raise model.max_positions",
                      key.empty() ? std::vector<std::string>{} : std::vector<std::string>{"model.max_positions"});
  }
  return spec;
}

// ---------------------------------------------------------------------------------------------
// JSON output
// ---------------------------------------------------------------------------------------------

/// The reference's key order for the model section (MODEL_DEFAULTS), then anything else.
ordered_json to_ordered(const json& value) { return ordered_json::parse(value.dump()); }

ordered_json ordered_model(const json& model) {
  static const std::vector<std::string> kOrder = {
      "arch",       "vocab_size", "d_model",      "n_layers",     "n_heads",     "max_positions",  "token_mixer",
      "diag_layers", "layers",    "attention",    "channel_mixer", "norm",       "prenorm",        "final_norm",
      "positional", "relative",   "embed_scale",  "embed_norm",   "tie_embeddings", "dropout",     "attention_dropout",
      "head",       "pooling",    "num_classes",  "pooler_dropout", "positional_dropout"};
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



ordered_json schedule_json(const ScheduleSpec& s) {
  ordered_json schedule = {{"name", to_string(s.kind)}};
  switch (s.kind) {
    case ScheduleKind::InverseSqrt:
      schedule["warmup_steps"] = s.warmup_steps;
      schedule["warmup_init_lr"] = s.warmup_init_lr;
      break;
    case ScheduleKind::PolynomialDecay:
      schedule["warmup_steps"] = s.warmup_steps;
      schedule["total_steps"] = s.total_steps;
      schedule["end_lr"] = s.end_lr;
      schedule["power"] = s.power;
      break;
    case ScheduleKind::Cosine:
      schedule["warmup_steps"] = s.warmup_steps;
      schedule["total_steps"] = s.total_steps;
      break;
    case ScheduleKind::Constant: break;
  }
  return schedule;
}

ordered_json train_json(const TrainSpec& t) {
  ordered_json out{
      {"batch_size", t.batch_size},
      {"max_steps", t.max_steps},
      {"seed", t.seed},
      {"optimizer", ordered_json{{"name", t.optimizer.name},
                                 {"lr", t.optimizer.lr},
                                 {"betas", ordered_json::array({t.optimizer.beta1, t.optimizer.beta2})},
                                 {"eps", t.optimizer.eps},
                                 {"weight_decay", t.optimizer.weight_decay}}},
      {"schedule", schedule_json(t.schedule)},
      {"clip_norm", t.clip_norm},
      {"eval_every", t.eval_every},
      {"test_every", t.test_every},
      {"log_every", t.log_every},
      {"eval_batch_size", t.eval_batch_size},
      {"update_freq", t.update_freq},
      {"threads", t.threads},
      {"precision", std::string(to_string(t.precision))},
      {"analysis", ordered_json{{"grad_stats", t.analysis.grad_stats}}},
      {"init_from", t.init_from.empty() ? ordered_json(nullptr) : ordered_json(t.init_from)}};
  // Written only when set, so the configs of runs that do not use them read as before.
  if (!t.checkpoint.best_metric.empty())
    out["checkpoint"] = ordered_json{{"best_metric", t.checkpoint.best_metric},
                                     {"mode", t.checkpoint.maximize ? "max" : "min"}};
  if (t.patience > 0) out["patience"] = t.patience;
  if (t.limit_eval_batches > 0) out["limit_eval_batches"] = t.limit_eval_batches;
  return out;
}

/// Resolves a spec document, adding the file:line of the offending key to any issue.
template <class F>
auto located(const YamlDocument& doc, F&& resolve) {
  try {
    return resolve();
  } catch (const ConfigIssue& issue) {
    throw ConfigError(doc.where.locate(issue) + ": " + issue.what());
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------------------------

std::string to_string(ScheduleKind kind) {
  for (const auto& [name, k] : kSchedules)
    if (k == kind) return name;
  throw ShapeError("[to_string] schedule kind without a name");
}

int64_t eval_examples_limit(const TrainSpec& train) {
  if (train.limit_eval_batches <= 0) return 0;
  if (train.limit_eval_batches > std::numeric_limits<int64_t>::max() / train.eval_batch_size)
    return std::numeric_limits<int64_t>::max();
  return train.limit_eval_batches * train.eval_batch_size;
}

bool same_experiment(const ExperimentSpec& a, const ExperimentSpec& b) {
  const bool same_options = a.task_options ? b.task_options && a.task_options->equals(*b.task_options) : !b.task_options;
  return a.task == b.task && same_options && a.model == b.model && a.vocab_size_given == b.vocab_size_given &&
         a.data && b.data && a.data->equals(*b.data) && a.train == b.train;
}

ExperimentSpec load_spec(const std::string& path, const std::vector<std::string>& overrides) {
  YamlDocument doc = read_spec_document(path);
  apply_overrides(doc, overrides);
  return resolve_spec_document(doc);
}

ExperimentSpec resolve_spec_document(const YamlDocument& doc) {
  return located(doc, [&] { return resolve_spec(doc.root, doc.where.file()); });
}

bool is_whole_spec(const std::string& path) { return yaml_has_top_level_key(path, {"data", "train", "base"}); }

ModelConfig load_model_only(const std::string& path, const std::vector<std::string>& overrides) {
  YamlDocument doc = read_yaml_document(path, true);
  apply_overrides(doc, overrides);
  return located(doc, [&] {
    const JsonSection top(doc.root, "");
    return resolve_model_json(top.get("model") ? *top.get("model") : json(nullptr),
                              ModelJsonOptions{true, false, "model"});
  });
}

ordered_json spec_to_json(const ExperimentSpec& spec) {
  json model = model_config_to_json(spec.model);
  if (!spec.vocab_size_given) model.erase("vocab_size");
  ordered_json root = ordered_json::object();
  if (spec.task_options) {
    ordered_json task = {{"name", spec.task}};
    const ordered_json options = spec.task_options->to_json();  // items() does not keep a temporary alive
    for (const auto& [key, value] : options.items()) task[key] = value;
    root["task"] = task;
  } else {
    root["task"] = spec.task;
  }
  root["model"] = ordered_model(model);
  root["data"] = spec.data ? spec.data->to_json() : ordered_json(nullptr);
  root["train"] = train_json(spec.train);
  if (!spec.paper.empty()) {
    ordered_json paper = ordered_json::object();
    for (const auto& [name, value] : spec.paper) paper[name] = value;
    root["paper"] = paper;
  }
  return root;
}

std::string spec_to_yaml(const ExperimentSpec& spec) {
  std::string out = "# Resolved spec (transnormer): every default filled in";
  out += spec.path.empty() ? "\n" : "; from " + spec.path + "\n";
  return out + to_yaml(spec_to_json(spec));
}

LrSchedule make_schedule(const ScheduleSpec& schedule, double peak_lr, int64_t max_steps) {
  if (schedule.kind == ScheduleKind::InverseSqrt && schedule.warmup_steps < 1)
    throw ConfigError("train.schedule.warmup_steps: must be >= 1 for inverse_sqrt, got " +
                      std::to_string(schedule.warmup_steps) + "; use e.g. 4000");
  LrSchedule out;
  out.kind = schedule.kind;
  out.peak_lr = peak_lr;
  out.warmup_steps = schedule.warmup_steps;
  out.warmup_init_lr = schedule.warmup_init_lr;
  out.total_steps = schedule.total_steps > 0 ? schedule.total_steps : max_steps;
  out.end_lr = schedule.end_lr;
  out.power = schedule.power;
  return out;
}

std::vector<std::string> schedule_warnings(const TrainSpec& train) {
  std::vector<std::string> out;
  const ScheduleSpec& s = train.schedule;
  if (s.kind == ScheduleKind::Constant) return out;
  const LrSchedule schedule = make_schedule(s, train.optimizer.lr, train.max_steps);
  const std::string steps = std::to_string(train.max_steps);
  // (step k trains at lr(k - 1), as train_step does: the last step's lr is lr(max_steps - 1))
  if (s.warmup_steps >= train.max_steps)
    out.push_back(fmt::format("train.schedule.warmup_steps ({}) is not below train.max_steps ({}): the run ends "
                              "inside the warmup, at lr {:.3g} of the peak {:.3g}; lower warmup_steps (e.g. to {})",
                              s.warmup_steps, steps, schedule.lr(train.max_steps - 1), train.optimizer.lr,
                              std::max<int64_t>(1, train.max_steps / 10)));
  const bool decays = s.kind == ScheduleKind::PolynomialDecay || s.kind == ScheduleKind::Cosine;
  if (decays && s.total_steps > train.max_steps)
    out.push_back(fmt::format("train.schedule.total_steps ({}) is beyond train.max_steps ({}): the decay is cut "
                              "short at lr {:.3g}; set total_steps to {} or leave it out (it follows max_steps)",
                              s.total_steps, steps, schedule.lr(train.max_steps - 1), steps));
  if (s.kind == ScheduleKind::Cosine && s.total_steps > 0 && s.total_steps < train.max_steps)
    out.push_back(fmt::format("train.schedule.total_steps ({}) is below train.max_steps ({}): this cosine is not "
                              "clamped at its end (as the official LRA code computes it), so over the last {} steps "
                              "the lr rises again from 0 (lr {:.3g} at step {}); set total_steps to {} or leave it out",
                              s.total_steps, steps, train.max_steps - s.total_steps, schedule.lr(train.max_steps - 1),
                              steps, steps));
  else if (decays && s.total_steps < train.max_steps)
    out.push_back(fmt::format("train.schedule.total_steps ({}) is below train.max_steps ({}): the last {} steps "
                              "run at the final lr {:.3g}; set total_steps to {} or leave it out",
                              s.total_steps, steps, train.max_steps - s.total_steps, schedule.lr(train.max_steps - 1), steps));
  return out;
}

}  // namespace tn
