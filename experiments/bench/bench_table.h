#pragma once
// `transnormer bench CONFIG... --table --seq-lens 1024,2048,...`: the paper's Table 7 kind of
// comparison. For every model file and sequence length n, training and inference throughput and
// peak memory of the whole model, each point in a fresh child process (`bench CONFIG --seq-len n
// --json`: its own RSS high-water mark); with a reference command (the PyTorch reference's
// `transnormer_ref.py`), its `train-bench` on the same file, batch, n and threads right after ours,
// and its peak RSS as the kernel counts it. Written as bench_table.json, bench_table.md and two
// plots (training tokens/s and peak memory against n) into the output folder.
#include <cstdint>
#include <string>
#include <vector>

namespace tn {

struct BenchTableRequest {
  std::vector<std::string> configs;    // model-only files (or whole specs), one row group each
  std::vector<int64_t> seq_lens;       // n of every point
  int64_t batch = 1, steps = 3, warmup = 1;
  int threads = 1;
  std::string self_exe;                // this executable, for the child benches
  std::vector<std::string> reference;  // argv prefix of the reference; empty: ours only
  std::string out_dir;                 // where the table and plots go
};

/// One (model, n) point: ours and, when asked, the reference's. NaN where not measured.
struct BenchTableRow {
  std::string model;  // the config's file stem
  int64_t seq_len = 0;
  double train_tokens_per_s = 0, infer_tokens_per_s = 0, peak_mb = 0;
  double ref_train_tokens_per_s = 0, ref_peak_mb = 0;
  std::string error, ref_error;  // why a side has no numbers ("" when it has)
};

/// Measures every point, logging progress with an ETA. A failed point (out of memory, a crash)
/// is recorded with its reason, not thrown. Throws ConfigError when a config or the request is
/// unusable (no configs, no seq_lens).
std::vector<BenchTableRow> run_bench_table(const BenchTableRequest& request);

/// Writes bench_table.json (the request and every row), bench_table.md (one table, with the
/// ratios ours/reference) and plots/bench_train_tokens_per_s.svg, plots/bench_peak_memory.svg,
/// atomically, into request.out_dir; returns the markdown. Throws IoError on a failed write.
std::string write_bench_table(const BenchTableRequest& request, const std::vector<BenchTableRow>& rows);

}  // namespace tn
