#pragma once
// Sequence-length scaling of one token-mixer layer (`transnormer bench --seq-lens ...`,
// docs/performance.md "Scaling in n"): for each mixer, causal and bidirectional, and each n, one
// layer of the config's d_model / n_heads on random input [batch, n, d_model] is timed for
// forward + backward (median of a few reps after warm-up), and the memory that measurement needs
// is recorded.
//
// Memory. RSS only grows within a process and our pool keeps freed buffers, so by default each
// point runs in a fresh child process (`<this executable> bench --scaling-worker REQUEST_JSON`):
// the child warms up OpenMP and oneDNN, resets its RSS high-water mark (/proc/self/clear_refs 5),
// reads its RSS as the baseline, builds the layer and measures; peak_mb = VmHWM − baseline: every
// byte the layer needed (parameters and their gradients, input, activations saved for backward,
// gradients, kernel scratch, oneDNN scratchpads). Without a worker executable (tests, or
// --scaling-in-process) the point runs in this process and peak_mb is the pool-tracked tensor
// high-water mark (tensor_mb below: a lower bound that misses non-pool scratch).
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "layers/config/model_config.h"

namespace tn {

struct ScalingOptions {
  std::vector<int64_t> seq_lens;
  std::vector<MixerKind> mixers;  // empty: default_scaling_mixers(config)
  bool causal = true, bidirectional = true;
  int64_t batch = 1;
  int reps = 3;    // timed reps (the median is reported)
  int warmup = 1;  // untimed reps first
  uint64_t seed = 0;
  /// Skip points where what a mixer keeps for its backward (MixerEntry::saved_floats, 4 bytes
  /// each) exceeds this.
  double max_quadratic_bytes = 4.0 * 1024 * 1024 * 1024;
  /// Non-empty: measure each point in a child process running this executable (see above).
  std::string worker_exe;
  int threads = 0;  // for the worker (0: this process's count)
};

struct ScalingRow {
  std::string mixer;
  int64_t seq_len = 0;
  bool causal = true;
  int64_t batch = 1;
  bool skipped = false;
  std::string reason;          // why skipped
  bool worker_failed = false;  // skipped because its worker process failed (in memory only, not in the JSON)
  double fwd_bwd_s = 0;        // median forward + backward time
  double fwd_s = 0;            // median forward time (part of fwd_bwd_s)
  double peak_mb = 0;          // memory of the measurement (MiB), method in `memory`
  std::string memory;          // "rss" (child process high-water mark) or "pool" (tensor bytes)
  double tensor_mb = 0;        // peak live pool tensor bytes above the baseline (sampled, MiB)
  double saved_mb = 0;         // live tensor bytes after forward (saved for backward + output)
  double gflop = 0;            // model FLOPs of forward + backward (bench_flops.h), 1e9
};

/// The model's distinct token mixers in layer order, then softmax when it is not among them.
std::vector<MixerKind> default_scaling_mixers(const ModelConfig& config);

/// "norm_attention" → MixerKind::NormAttention; throws ConfigError naming the choices.
MixerKind parse_mixer_kind(const std::string& name);

/// Measures one point in this process (peak_mb = tensor_mb, memory "pool").
ScalingRow measure_mixer(const ModelConfig& config, MixerKind mixer, int64_t seq_len, bool causal,
                         const ScalingOptions& options);

/// Every (mixer, causal, n) point of `options`, in that nesting order, skipped ones included.
/// `on_row` (optional) sees each row as it is finished (progress).
std::vector<ScalingRow> run_scaling(const ModelConfig& config, const ScalingOptions& options,
                                    const std::function<void(const ScalingRow&)>& on_row = {});

/// The worker side of a child measurement: parses the request (as run_scaling writes it),
/// measures, prints the row as one JSON line on stdout. Returns the exit code.
int scaling_worker_main(const std::string& request_json);

/// {"mixer", "seq_len", "causal", "batch", "fwd_bwd_s", "fwd_s", "peak_mb", "memory", "tensor_mb",
/// "saved_mb", "gflop", "gflops"}; skipped rows: {"mixer", "seq_len", "causal", "batch",
/// "skipped": reason}.
nlohmann::json scaling_row_json(const ScalingRow& row);
ScalingRow scaling_row_from_json(const nlohmann::json& j);

/// Per (mixer, causal): time and memory ratios of the largest measured n to the smallest,
/// [{"mixer", "causal", "from", "to", "time_ratio", "memory_ratio", "n_ratio"}].
nlohmann::json scaling_ratios_json(const std::vector<ScalingRow>& rows);

/// The readable table of `bench` without --json.
std::string format_scaling_table(const std::vector<ScalingRow>& rows);

}  // namespace tn
