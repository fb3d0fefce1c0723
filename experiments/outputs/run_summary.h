#pragma once
// Typed run outputs, part 2: summary.json, the final word on a run (docs/cli/run-folder.md).
// Written by the runner, read back by `report` and the tests. Keys:
//   "valid", "test": the final metrics of each evaluated split ({loss, ppl, tokens} for LM);
//   "train": {steps, epochs, tokens, tokens_per_s, wall_s, eval_s, eval_tokens, eval_tokens_per_s,
//             total_s, threads, seed, ranks};
//   "params", "vocab_size", "peak_rss_mb", "data": {split: file}, "evals": [every EvalRecord];
//   "analysis": the opt-in analyses (absent when none ran);
//   plus the task's baselines at the top level (LM: unigram_valid_ppl, unigram_test_ppl; null
//   when the split is missing).
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "experiments/outputs/metrics.h"

namespace tn {

/// summary.json "train": totals over the whole run (a resumed run adds its sessions; total_s
/// covers the last session only).
struct TrainTotals {
  int64_t steps = 0;
  double epochs = 0;
  int64_t tokens = 0;         // training targets
  double tokens_per_s = 0;    // tokens / wall_s
  double wall_s = 0;          // seconds in training steps
  double eval_s = 0;          // seconds in evaluations
  int64_t eval_tokens = 0;    // positions (batch × padded length) this rank evaluated
  double eval_tokens_per_s = 0;  // eval_tokens / eval_s: comparable to bench's inference tokens/s
  double total_s = 0;         // wall-clock seconds of this process
  int threads = 0;            // per rank
  uint64_t seed = 0;
  int ranks = 1;              // data-parallel processes (mpirun, srun); tokens and tokens_per_s are their sum
  nlohmann::json to_json() const;
  /// "ranks" may be absent (a summary written before it was recorded): 1; "eval_tokens" and
  /// "eval_tokens_per_s" too: 0.
  static TrainTotals from_json(const nlohmann::json& object);
  bool operator==(const TrainTotals&) const = default;
};

struct RunSummary {
  std::map<std::string, Metrics> final;  // split ("valid", "test") -> its last evaluation
  TrainTotals train;
  int64_t params = 0;
  int64_t vocab_size = 0;
  double peak_rss_mb = 0;
  std::map<std::string, std::string> data;  // split -> where it came from ("" = not configured)
  /// Task-specific reference numbers at the top level (LM: unigram_valid_ppl); nullopt = null.
  std::map<std::string, std::optional<double>> baselines;
  std::vector<EvalRecord> evals;  // every evaluation of the run, in order
  /// Opt-in analyses of the run (train.analysis), null when none ran. "grad_stats":
  /// {"definition", "layers": [{"layer", "mixer", "mean", "std", "rsd", "n"}], "rsd_mean"}.
  nlohmann::json analysis;
  /// train.checkpoint.best_metric's best validation: {"metric", "mode", "value", "step"} (its
  /// weights are in checkpoint_best.safetensors), null when not configured.
  nlohmann::json best;
  /// The step train.patience stopped the run at, null when it ran to train.max_steps.
  nlohmann::json stopped_early_at;

  nlohmann::json to_json() const;
  /// Throws std::invalid_argument naming the first key that is missing or of the wrong type.
  static RunSummary from_json(const nlohmann::json& object);
  bool operator==(const RunSummary&) const = default;
};

}  // namespace tn
