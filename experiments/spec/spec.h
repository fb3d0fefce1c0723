#pragma once
// ExperimentSpec: a YAML spec (`task:`, `model:`, `data:`, `train:`) read (experiments/spec_yaml),
// overridden (--set), resolved and validated into typed structs. Keys, defaults and checks follow
// the PyTorch reference implementation of the paper's models, with two deliberate differences:
// unknown keys under `model:` and at the top level are errors here (the reference warns), and
// `vocab_size` may be left out (filled from the data's vocabulary). The `data:` section belongs to
// the reader named by data.reader (data/readers/registry.h); the task to experiments/tasks.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/runtime/optim/lr_schedule.h"
#include "core/runtime/precision.h"
#include "data/readers/reader.h"
#include "experiments/spec/spec_yaml.h"
#include "experiments/spec/task_options.h"
#include "layers/config/model_config.h"

namespace tn {

/// train.optimizer. YAML: {name: adamw, lr: 5e-4, betas: [0.9, 0.98], eps: 1e-8, weight_decay: 0.01}.
struct OptimizerSpec {
  std::string name = "adamw";  // only adamw (decoupled weight decay, torch.optim.AdamW)
  double lr = 5e-4;            // peak learning rate, > 0
  double beta1 = 0.9, beta2 = 0.98;  // YAML `betas: [beta1, beta2]`, each in [0, 1)
  double eps = 1e-8;           // >= 0
  double weight_decay = 0.01;  // >= 0, applied to every parameter
  bool operator==(const OptimizerSpec&) const = default;
};

/// train.schedule; peak = optimizer.lr. Resolved: keys the named schedule does not take keep
/// these defaults, except warmup_steps, which defaults to 0 for every schedule but inverse_sqrt.
struct ScheduleSpec {
  ScheduleKind kind = ScheduleKind::InverseSqrt;  // YAML name: inverse_sqrt | polynomial_decay | cosine | constant
  int64_t warmup_steps = 4000;        // inverse_sqrt: >= 1; polynomial_decay, cosine: >= 0
  double warmup_init_lr = 1e-7;       // inverse_sqrt only
  int64_t total_steps = 0;            // polynomial_decay, cosine; resolved to max_steps when left out
  double end_lr = 0;                  // polynomial_decay only
  double power = 1;                   // polynomial_decay only
  bool operator==(const ScheduleSpec&) const = default;
};

/// The YAML name of a schedule kind ("inverse_sqrt").
std::string to_string(ScheduleKind kind);

/// The most batches one step accumulates (train.update_freq): 4,096. A step holds them all at
/// once, so the memory check counts them (experiments/runner/memory_check.h).
inline constexpr int64_t kMaxUpdateFreq = 4096;

/// train: one step = one optimizer update over update_freq batches.
struct TrainSpec {
  int64_t batch_size = 8;     // samples per batch, >= 1
  int64_t max_steps = 0;      // required, >= 1
  uint64_t seed = 1;          // init, dropout and batch order
  OptimizerSpec optimizer;
  ScheduleSpec schedule;
  double clip_norm = 0;       // > 0: clip the global gradient norm; 0: no clipping
  int64_t eval_every = 0, test_every = 0;  // evaluate valid/test every N steps (0: only at the end)
  int64_t log_every = 10;     // a metrics.jsonl line every N steps (0: none)
  int64_t eval_batch_size = 16;  // samples per evaluation batch, >= 1
  /// Each evaluation scores at most this many batches of eval_batch_size (Lightning's
  /// limit_val_batches, for smoke tests): a classifier's examples spread over the split, a
  /// language model's first sequences. 0 (null): the whole split.
  int64_t limit_eval_batches = 0;
  int64_t update_freq = 1;    // gradient accumulation: batches per update, 1..kMaxUpdateFreq (not in the reference)
  int threads = 0;            // 0: the runtime's default (not in the reference)
  Precision precision = Precision::F32;  // f32 | bf16 (not in the reference)
  /// train.analysis: opt-in analyses. grad_stats: the attention-score gradient statistics of
  /// paper §3.1 (experiments/analysis/grad_stats.h) at every logged step.
  struct Analysis {
    bool grad_stats = false;
    bool operator==(const Analysis&) const = default;
  } analysis;
  /// train.init_from: a run directory (its checkpoint.safetensors) or a checkpoint file whose
  /// matching parameters start this run (fine-tuning; layers/persistence/init_from.h). "" = none. Relative
  /// paths are taken from the current directory.
  std::string init_from;
  /// train.checkpoint: {best_metric: valid.<metric>, mode: min|max}: each validation whose
  /// best_metric beats every earlier one also writes checkpoint_best.safetensors. best_metric ""
  /// (the default): none. mode defaults to min for loss, ppl and error metrics, else max.
  struct Checkpoint {
    std::string best_metric;
    bool maximize = false;
    bool operator==(const Checkpoint&) const = default;
  } checkpoint;
  /// train.patience: stop after this many validations in a row without a better best_metric
  /// (early stopping; needs train.checkpoint.best_metric). 0 (the default): never.
  int64_t patience = 0;
  bool operator==(const TrainSpec&) const = default;
};

struct ExperimentSpec {
  std::string path;  // file it came from
  std::string name;  // file stem, for runs/<name>
  std::string task = "language_modeling";  // experiments/tasks/registry.h
  std::shared_ptr<const TaskOptions> task_options;  // the task's own options; null when it takes none
  ModelConfig model;
  bool vocab_size_given = false;  // vocab_size may be left out: filled from the data's vocabulary later (model.vocab_size 0)
  bool num_classes_given = false;  // the spec sets model.num_classes: it must then match the data's classes
  std::shared_ptr<const DataSpec> data;  // the reader's typed section; never null in a resolved spec
  TrainSpec train;
  /// `paper:` the published values this run is compared with ({"test.ppl": 31.01}); nested
  /// mappings are flattened to dotted metric names ("split.metric"). Shown beside the measured
  /// values by `report`; not part of the experiment (same_experiment ignores it).
  std::map<std::string, double> paper;
};

/// The same experiment: task (with its options), model (with vocab_size_given), data and train sections equal
/// (path and name, where the spec was read from, do not count).
bool same_experiment(const ExperimentSpec& a, const ExperimentSpec& b);

/// Loads a YAML spec, applies `overrides` ("key.path=value", value parsed as YAML, applied in
/// order before validation; missing mappings are created), resolves defaults and validates.
/// Every error is a ConfigError with one line "<file>:<line>: <key.path>: <problem>; <fix>"
/// (a value from --set is located as "<file>: --set key.path=value"; a key left out points at
/// its section's line). Covered: unreadable file, malformed YAML (file:line:col), duplicate
/// keys, unknown keys at any level (with the nearest valid key: "did you mean `d_model`?"),
/// wrong types ("expected an integer, got \"abc\""), out-of-range values (d_model not divisible
/// by n_heads, odd d_head with relative PE, sizes < 1, dropout outside [0, 1), lr <= 0,
/// seq_len < 1, batch_size < 1, max_steps missing or < 1, warmup_steps < 1 for inverse_sqrt,
/// data.seq_len > model.max_positions with learned positions), an unknown task or reader,
/// data.valid together with split_valid_from_train > 0, a malformed --set ("expected key.path=value").
ExperimentSpec load_spec(const std::string& path, const std::vector<std::string>& overrides = {});

/// Resolves and validates a spec document (read_yaml_document, overrides applied by the caller, e.g.
/// a sweep's points with apply_override); errors as load_spec, located through doc.where.
ExperimentSpec resolve_spec_document(const YamlDocument& doc);

/// True when the file is a whole experiment spec (a mapping with a data: or train: section), false
/// for a model-only file (see load_model_only). Throws ConfigError for unreadable or malformed YAML.
bool is_whole_spec(const std::string& path);

/// For `bench`: a file holding a `model:` section (other top-level sections are ignored, not
/// validated) or the model mapping itself, as the reference's train-bench accepts; a golden
/// case.json works too. Overrides use the same paths as load_spec ("model.d_model=64").
/// vocab_size is optional: 0 when left out, for the caller to fill or reject. Errors as load_spec.
ModelConfig load_model_only(const std::string& path, const std::vector<std::string>& overrides = {});

/// The resolved spec as ordered JSON (task, model via model_config_to_json in the reference's
/// key order, data with its reader first, train); vocab_size only when it was given.
nlohmann::ordered_json spec_to_json(const ExperimentSpec& spec);

/// spec_to_json as YAML text with a header comment, for the run's config.yaml; loading it again
/// with load_spec gives the same spec.
std::string spec_to_yaml(const ExperimentSpec& spec);

/// The schedule of a resolved spec. total_steps 0 (only in a spec not made by load_spec) means
/// max_steps. Throws ConfigError for warmup_steps < 1 with inverse_sqrt.
LrSchedule make_schedule(const ScheduleSpec& schedule, double peak_lr, int64_t max_steps);

/// The examples an evaluation scores at most (train.limit_eval_batches × eval_batch_size, at most
/// INT64_MAX); 0: the whole split.
int64_t eval_examples_limit(const TrainSpec& train);

/// What does not fit train.max_steps in the schedule, one message per problem, each with its fix:
/// a warmup that has not ended by the last step (the run never reaches the peak lr), a decay
/// (total_steps of polynomial_decay or cosine) that ends after the last step or well before it.
/// Empty when the schedule fits. The runner and `train --dry-run` print them as warnings.
std::vector<std::string> schedule_warnings(const TrainSpec& train);

}  // namespace tn
