#pragma once
// `transnormer bench` as one call: the spec (a whole experiment spec, validated as `train`
// validates it, or a file with only a model: section), then the whole-model timing, the optional
// f32/bf16 comparison, the matmul probe and the per-mixer scaling table, into a BenchReport.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/runtime/precision.h"
#include "experiments/bench/bench_report.h"

namespace tn {

/// Which scaling points run: causal, bidirectional or both.
enum class Causality { Both, Causal, Bidirectional };

struct BenchRequest {
  std::string config, data_root;
  std::vector<std::string> overrides;  // --set; model.* only for a model-only file
  int64_t batch = 0, seq_len = 0, vocab = 0;  // 0: the spec's (train.batch_size, data.seq_len, data vocabulary), else 8, 256
  int64_t steps = 10, warmup = 2;
  std::optional<Precision> precision;  // default: the spec's train.precision, else f32
  bool skip_model = false, compare_precision = false;
  int64_t probe_size = 2048;  // 0: no probe, no MFU
  int probe_reps = 5;
  std::vector<int64_t> seq_lens;        // scaling table; empty: none
  std::vector<std::string> mixers;      // scaling mixers by name; empty: the model's own plus softmax
  int64_t scaling_batch = 1;
  int scaling_reps = 3, scaling_warmup = 1;
  Causality causality = Causality::Both;
  double scaling_max_gib = 4.0;
  std::string worker_exe;  // non-empty: one child process per scaling point
};

/// Runs the bench. Logs progress and warnings about flags that do nothing in this combination.
/// Throws ConfigError for a bad spec or override, a request that measures nothing, or a run that
/// cannot fit in memory; DataError for missing data.
BenchReport run_bench(const BenchRequest& request);

}  // namespace tn
