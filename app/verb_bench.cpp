// `transnormer bench CONFIG.yaml [--json] [--batch B --seq-len L --vocab V --steps N --threads T]
//                    [--precision f32|bf16] [--compare-precision]
//                    [--seq-lens 512,1024,... [--mixers softmax,diag,...] [--scaling-batch B]]`
// `transnormer bench CONFIG... --table --seq-lens 1024,2048,... [--reference "python3 transnormer_ref.py"]
//                    [--batch B --threads T --steps N --warmup N] [--out DIR]`: whole models at each n
// (experiments/bench/bench_table.h), the paper's Table 7 comparison.
// Parses the arguments into a BenchRequest; experiments/bench/bench_run.h measures, and the
// BenchReport (experiments/bench/bench_report.h) is printed as JSON (--json) or text.
// docs/performance.md explains every number.
#include <unistd.h>

#include <climits>
#include <iostream>
#include <map>
#include <sstream>

#include <spdlog/spdlog.h>

#include "app/verbs.h"
#include "core/runtime/dnnl/engine.h"
#include "core/error.h"
#include "core/platform/io/dir_lock.h"
#include "experiments/bench/bench_run.h"
#include "experiments/bench/bench_table.h"

namespace tn::app {
namespace {

std::string self_executable() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  buf[n] = '\0';
  return buf;
}

struct BenchArgs {
  BenchRequest request;
  std::vector<std::string> configs;
  bool table = false;
  std::string reference, out = "bench_table";
  bool json = false;
  int threads = 0;
  bool scaling_in_process = false;
  std::string scaling_worker;
  std::string precision, causality = "both";
};

/// Parses a choice CLI11 already restricted to the map's keys.
template <class E>
E choice_of(const std::map<std::string, E>& names, const std::string& value) {
  return names.at(value);
}

const std::map<std::string, Precision> kPrecisions = {{"f32", Precision::F32}, {"bf16", Precision::BF16}};
const std::map<std::string, Causality> kCausalities = {
    {"both", Causality::Both}, {"causal", Causality::Causal}, {"bidirectional", Causality::Bidirectional}};

std::vector<std::string> keys_of(const auto& names) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : names) keys.push_back(key);
  return keys;
}

/// `bench --table`: the request from the flags, the points, the files.
int run_table(const BenchArgs& args) {
  check_folder_path(args.out, "bench table folder");  // before hours of measurement, not after
  BenchTableRequest t;
  t.configs = args.configs;
  t.seq_lens = args.request.seq_lens;
  t.batch = args.request.batch > 0 ? args.request.batch : 1;
  t.threads = args.threads > 0 ? args.threads : 1;
  t.steps = args.request.steps;
  t.warmup = args.request.warmup;
  t.self_exe = self_executable();
  t.out_dir = args.out;
  std::istringstream words(args.reference);
  for (std::string w; words >> w;) t.reference.push_back(w);
  const std::vector<BenchTableRow> rows = run_bench_table(t);
  std::cout << write_bench_table(t, rows) << std::flush;
  spdlog::info("{}: bench_table.json, bench_table.md, plots/", t.out_dir);
  return 0;
}

/// True when scaling points were asked for and the child process of every one failed (the report
/// then holds no measurement; each point's reason says why): logged, and bench exits 1.
bool all_workers_failed(const BenchReport& report) {
  if (report.scaling.empty()) return false;
  for (const ScalingRow& row : report.scaling)
    if (!row.worker_failed) return false;
  spdlog::error("bench: every scaling point's worker process failed: {}", report.scaling.front().reason);
  return true;
}

}  // namespace

Action add_bench_verb(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  BenchRequest& r = args->request;
  CLI::App* sub = app.add_subcommand("bench", "Measure throughput, memory, MFU and scaling in n of a model");
  // Not ->required(): the internal --scaling-worker child runs without one (checked below).
  sub->add_option("config", args->configs, "experiment spec, or a file with only a model: section (with --table: several)");
  sub->add_flag("--table", args->table,
                "whole models at every --seq-lens n, one fresh process per point: training and inference tokens/s "
                "and peak memory, as a table and plots in --out (the paper's Table 7)");
  sub->add_option("--reference", args->reference,
                  "with --table: the command of the PyTorch reference (e.g. \"python3 transnormer_ref.py\"), whose "
                  "train-bench runs after ours at every point");
  sub->add_option("--out", args->out, "with --table: folder for bench_table.{json,md} and plots/ (default bench_table)");
  sub->add_flag("--json", args->json, "print one JSON object on stdout");
  sub->add_option("--batch", r.batch, "sequences per step (default: the spec's train.batch_size, else 8)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  sub->add_option("--seq-len", r.seq_len, "tokens per sequence (default: the spec's data.seq_len, else 256)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  sub->add_option("--vocab", r.vocab, "vocabulary size (over the model section's vocab_size)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  sub->add_option("--steps", r.steps, "timed steps")->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  sub->add_option("--warmup", r.warmup, "untimed steps first")->check(CLI::Range(int64_t{0}, int64_t{1} << 20));
  sub->add_option("--threads", args->threads, "threads (default, or 0: all cores)")->check(CLI::Range(0, 1024));
  sub->add_option("--set", r.overrides, "override a spec value: key.path=value (repeatable)");
  sub->add_option("--data-root", r.data_root, "dataset root, to size the vocabulary from the spec's data");
  sub->add_flag("--skip-model", r.skip_model, "skip the whole-model training/inference timing");
  sub->add_flag("--compare-precision", r.compare_precision,
                "also time f32 and bf16 training steps of one model interleaved (--steps pairs) and "
                "report the bf16 speed-up, robust to load that comes and goes");
  sub->add_option("--precision", args->precision,
                  "f32, or bf16 for the dense products (default: the spec's train.precision, else f32)")
      ->check(CLI::IsMember(keys_of(kPrecisions)));
  sub->add_option("--probe-size", r.probe_size, "size of the square matmul timed for the peak GFLOP/s (0: no probe, no MFU)")
      ->check(CLI::Range(int64_t{0}, int64_t{16384}));
  sub->add_option("--probe-reps", r.probe_reps, "timed reps of the matmul probe")->check(CLI::Range(1, 1000));
  sub->add_option("--seq-lens", r.seq_lens, "sequence lengths of the per-mixer scaling table, e.g. 512,1024")
      ->delimiter(',')
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  sub->add_option("--mixers", r.mixers, "token mixers of the scaling table (default: the model's own, plus softmax)")
      ->delimiter(',');
  sub->add_option("--scaling-batch", r.scaling_batch, "batch of the scaling measurements")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  sub->add_option("--scaling-reps", r.scaling_reps, "timed reps per scaling point (median reported)")
      ->check(CLI::Range(1, 1000));
  sub->add_option("--scaling-warmup", r.scaling_warmup, "untimed reps per scaling point")->check(CLI::Range(0, 1000));
  sub->add_option("--causality", args->causality, "scaling points: both, causal or bidirectional")
      ->check(CLI::IsMember(keys_of(kCausalities)));
  sub->add_option("--scaling-max-gib", r.scaling_max_gib,
                  "skip points where a mixer keeps more than this many GiB for its backward")
      ->check(CLI::Range(0.001, 1024.0));
  sub->add_flag("--scaling-in-process", args->scaling_in_process,
                "measure scaling points in this process (peak = tensor high-water mark) instead of "
                "one child process per point (peak = RSS high-water mark)");
  sub->add_option("--scaling-worker", args->scaling_worker, "internal: measure one scaling point")->group("");
  return [args]() {
    if (!args->scaling_worker.empty()) return scaling_worker_main(args->scaling_worker);
    if (args->configs.empty())
      throw ConfigError("bench: a config file is required, e.g. transnormer bench configs/quickstart.yaml");
    if (args->table) return run_table(*args);
    if (args->configs.size() != 1)
      throw ConfigError("bench: " + std::to_string(args->configs.size()) +
                        " config files given; one, or several with --table");
    args->request.config = args->configs.front();
    set_num_threads(args->threads);
    BenchRequest request = args->request;
    if (!args->precision.empty()) request.precision = choice_of(kPrecisions, args->precision);
    request.causality = choice_of(kCausalities, args->causality);
    if (!args->scaling_in_process) request.worker_exe = self_executable();
    const BenchReport report = run_bench(request);
    if (args->json)
      std::cout << report.to_json().dump() << std::endl;
    else
      std::cout << report.to_text() << std::flush;
    return all_workers_failed(report) ? 1 : 0;
  };
}

}  // namespace tn::app
