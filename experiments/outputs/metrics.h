#pragma once
// Typed run outputs, part 1: the named metrics of one evaluation, and the two kinds of
// metrics.jsonl record (a training-log line and an evaluation). Each has one to_json/from_json
// pair; verbs, the runner and reports read these types instead of repeating key strings.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tn {

/// The named results of one evaluation, in the task's order: language modelling gives
/// loss (nats per target), ppl (exp(loss)) and tokens (targets scored); later tasks add accuracy,
/// mcc, f1, pearson, spearman. A count is an integer (written as a JSON integer). from_json
/// gives the names in the JSON object's (alphabetical) order.
/// Whether a smaller value of a metric ("ppl", "valid.ppl", "test.loss") is better: loss, ppl,
/// perplexity, error, bpc, mse and mae are; accuracy, f1, mcc, pearson, spearman and others are not.
/// Reports mark the best value by it; train.checkpoint.mode defaults by it.
bool lower_is_better(const std::string& metric);

class Metrics {
 public:
  /// Sets a real-valued metric (replacing one of the same name, keeping its place).
  void set(const std::string& name, double value);
  /// Sets an integral metric (a count such as tokens).
  void set_count(const std::string& name, int64_t value);
  /// The value of `name`, or nullopt.
  std::optional<double> find(const std::string& name) const;
  /// The value of `name`; throws std::out_of_range naming it when absent.
  double at(const std::string& name) const;
  /// Names in order.
  std::vector<std::string> names() const;
  bool empty() const { return entries_.empty(); }

  /// Adds every metric as a key of `object` (counts as integers).
  void write_to(nlohmann::json& object) const;
  nlohmann::json to_json() const;
  /// Every number in `object` except the keys in `skip` (integers become counts). Throws
  /// std::invalid_argument naming a key whose value is not a number or null.
  static Metrics from_json(const nlohmann::json& object, const std::vector<std::string>& skip = {});
  /// Same names with the same values and kinds, in any order (JSON objects do not keep it).
  bool operator==(const Metrics& other) const;

 private:
  struct Entry {
    std::string name;
    double value = 0;
    bool count = false;
    bool operator==(const Entry&) const = default;
  };
  std::vector<Entry> entries_;
};

/// metrics.jsonl: one evaluation. JSON: {"step", "split", <metrics>}.
struct EvalRecord {
  int64_t step = 0;
  std::string split;  // "valid" | "test"
  Metrics metrics;
  nlohmann::json to_json() const;
  /// Throws std::invalid_argument for a missing step/split or a non-numeric metric.
  static EvalRecord from_json(const nlohmann::json& object);
  bool operator==(const EvalRecord&) const = default;
};

/// metrics.jsonl: one training-log line, averaged over the steps since the previous one.
/// JSON: {"step", "epoch", "loss", "lr", "grad_norm", "tokens_per_s", "train_s"}.
struct TrainRecord {
  int64_t step = 0;
  double epoch = 0;         // epochs done (fractional)
  double loss = 0;          // mean training loss per target since the last record (nats)
  double lr = 0;            // learning rate of this step's update
  double grad_norm = 0;     // global gradient norm before clipping, this step
  double tokens_per_s = 0;  // training targets per second since the last record
  double train_s = 0;       // seconds of training steps so far
  /// train.analysis.grad_stats: mean |dL/ds_ij| of each attention layer at this step ("grad_scores";
  /// empty and not written otherwise).
  std::vector<double> grad_scores;
  nlohmann::json to_json() const;
  static TrainRecord from_json(const nlohmann::json& object);
  bool operator==(const TrainRecord&) const = default;
};

/// A line of metrics.jsonl: an evaluation when it has a "split", else a training-log line.
/// Throws std::invalid_argument naming what is missing.
std::pair<std::optional<TrainRecord>, std::optional<EvalRecord>> parse_metrics_line(const nlohmann::json& object);

}  // namespace tn
