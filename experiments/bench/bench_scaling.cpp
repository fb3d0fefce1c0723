#include "experiments/bench/bench_scaling.h"

#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include <spdlog/spdlog.h>

#include "core/runtime/autograd/tape.h"
#include "core/runtime/dnnl/engine.h"
#include "core/error.h"
#include "core/runtime/memory_pool.h"
#include "core/platform/process/child_process.h"
#include "experiments/bench/bench_flops.h"
#include "core/runtime/math/stats.h"
#include "layers/attention/mixer_table.h"
#include "layers/module/init.h"
#include "layers/config/model_config_json.h"
#include "layers/module/param_store.h"
#include "layers/module/registry.h"

namespace tn {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

/// A field of /proc/self/status in KiB ("VmRSS", "VmHWM"); -1 when unreadable.
double proc_status_kib(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::strtod(line.c_str() + field.size() + 1, nullptr);
  return -1.0;
}

/// Resets this process's RSS high-water mark to its current RSS (Linux >= 4.0); false if refused.
bool reset_peak_rss() {
  std::ofstream out("/proc/self/clear_refs");
  if (!out) return false;
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

/// Scalar Σ y ⊙ r with r fixed: seeds backward with d_out = r (a random upstream gradient).
Var probe_loss(Tape& tape, const Var& y, const Tensor& r) {
  double acc = 0.0;
  const float* yp = y->value.data();
  const float* rp = r.data();
  const int64_t count = r.numel();
#pragma omp parallel for reduction(+ : acc) schedule(static)
  for (int64_t i = 0; i < count; ++i) acc += static_cast<double>(yp[i]) * rp[i];
  Var loss = make_var(Tensor::full({}, static_cast<float>(acc)), true);
  tape.record([y, r, loss]() {
    if (!loss->has_grad() || !y->requires_grad) return;
    const float g = loss->grad().data()[0];
    float* gy = y->grad_buf().data();
    const float* rp = r.data();
    const int64_t count = r.numel();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < count; ++i) gy[i] += g * rp[i];
  });
  return loss;
}

bool quadratic_too_big(const ModelConfig& config, MixerKind mixer, int64_t n,
                       const ScalingOptions& options, std::string& reason) {
  // What the mixer keeps for its backward beyond the per-position activations, as its table
  // entry counts it (DiagAttention's block probabilities; nothing for the linear mixers).
  const MixerEntry* entry = find_mixer(mixer);
  if (!entry || !entry->saved_floats) return false;
  const double bytes = 4.0 * entry->saved_floats(config, options.batch, n);
  if (bytes <= options.max_quadratic_bytes) return false;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s would keep %.3g GiB for its backward (> %.3g GiB limit)",
                std::string(entry->name).c_str(), bytes / (kMiB * 1024.0), options.max_quadratic_bytes / (kMiB * 1024.0));
  reason = buf;
  return true;
}

ScalingRow skeleton(MixerKind mixer, int64_t n, bool causal, int64_t batch) {
  ScalingRow row;
  row.mixer = to_string(mixer);
  row.seq_len = n;
  row.causal = causal;
  row.batch = batch;
  return row;
}

/// The last non-empty line of `text` ("" when none).
std::string last_line(const std::string& text) {
  std::istringstream lines(text);
  std::string line, last;
  while (std::getline(lines, line))
    if (!line.empty()) last = line;
  return last;
}

ScalingRow measure_in_child(const ModelConfig& config, MixerKind mixer, int64_t n, bool causal,
                            const ScalingOptions& options) {
  ModelConfig c = config;
  if (c.vocab_size < 1) c.vocab_size = 1;  // irrelevant to a token mixer; required by the reader
  const nlohmann::json request = {{"model", model_config_to_json(c)},
                                  {"mixer", to_string(mixer)},
                                  {"seq_len", n},
                                  {"causal", causal},
                                  {"batch", options.batch},
                                  {"reps", options.reps},
                                  {"warmup", options.warmup},
                                  {"seed", options.seed},
                                  {"threads", options.threads > 0 ? options.threads : num_threads()}};
  const ChildResult child =
      run_child({options.worker_exe, "bench", "--scaling-worker", request.dump()}, true);
  ScalingRow row = skeleton(mixer, n, causal, options.batch);
  if (!WIFEXITED(child.status) || WEXITSTATUS(child.status) != 0) {
    row.skipped = row.worker_failed = true;
    row.reason = "worker failed: " + describe_child_status(child.status);
    if (const std::string why = last_line(child.err); !why.empty()) row.reason += ": " + why;
    return row;
  }
  try {  // the row is the last non-empty line of the worker's stdout
    return scaling_row_from_json(nlohmann::json::parse(last_line(child.out)));
  } catch (const std::exception& e) {
    row.skipped = row.worker_failed = true;
    row.reason = std::string("worker printed no row: ") + e.what();
    return row;
  }
}

}  // namespace

std::vector<MixerKind> default_scaling_mixers(const ModelConfig& config) {
  std::vector<MixerKind> kinds;
  auto add = [&kinds](MixerKind k) {
    if (std::find(kinds.begin(), kinds.end(), k) == kinds.end()) kinds.push_back(k);
  };
  if (config.layers.empty()) add(config.token_mixer);
  for (MixerKind k : config.layers) add(k);
  add(MixerKind::Softmax);
  return kinds;
}

MixerKind parse_mixer_kind(const std::string& name) {
  if (const MixerEntry* entry = find_mixer(name)) return entry->kind;
  std::string choices;
  for (const std::string& known : mixer_names()) choices += (choices.empty() ? "" : ", ") + known;
  throw ConfigError("bench --mixers: unknown token mixer `" + name + "`; choose from " + choices);
}

ScalingRow measure_mixer(const ModelConfig& config, MixerKind mixer, int64_t n, bool causal,
                         const ScalingOptions& options) {
  if (n < 1 || options.batch < 1) throw ConfigError("bench: sequence lengths and --scaling-batch must be >= 1");
  ScalingRow row = skeleton(mixer, n, causal, options.batch);
  row.memory = "pool";
  ModelConfig c = config;
  c.arch = causal ? Arch::Decoder : Arch::Encoder;
  const int64_t d = c.d_model;

  const double live0 = static_cast<double>(pool_stats().live_bytes);
  double live_peak = live0, saved = 0;
  auto sample = [&live_peak]() {
    live_peak = std::max(live_peak, static_cast<double>(pool_stats().live_bytes));
  };
  {
    ParamStore store;
    Rng rng(options.seed);
    std::unique_ptr<TokenMixer> layer = make_token_mixer(c, mixer, store, "token_mixer", rng);
    Tensor x = Tensor::empty({options.batch, n, d});
    Tensor r = Tensor::empty({options.batch, n, d});
    normal_init(x, 1.0, rng);
    normal_init(r, 1.0 / std::sqrt(static_cast<double>(x.numel())), rng);
    Var input = make_var(x, true);
    Rng dropout_rng(options.seed + 1);
    std::vector<double> fwd_bwd, fwd;
    using Clock = std::chrono::steady_clock;
    for (int rep = 0; rep < options.warmup + std::max(options.reps, 1); ++rep) {
      Tape tape;
      // Recorded first, so it runs last in backward: every saved activation and every
      // intermediate gradient is still alive then (the tape releases them after this).
      tape.record(sample);
      ForwardContext ctx{tape, true, dropout_rng, nullptr};
      const auto t0 = Clock::now();
      Var y = layer->forward(ctx, input);
      Var loss = probe_loss(tape, y, r);
      const auto t1 = Clock::now();
      sample();
      saved = std::max(saved, static_cast<double>(pool_stats().live_bytes) - live0);
      tape.backward(loss);
      const auto t2 = Clock::now();
      sample();
      if (rep >= options.warmup) {
        fwd.push_back(std::chrono::duration<double>(t1 - t0).count());
        fwd_bwd.push_back(std::chrono::duration<double>(t2 - t0).count());
      }
      input->grad() = Tensor();
      store.zero_grad();
    }
    row.fwd_s = median_of(fwd);
    row.fwd_bwd_s = median_of(fwd_bwd);
  }
  row.tensor_mb = (live_peak - live0) / kMiB;
  row.saved_mb = saved / kMiB;
  row.peak_mb = row.tensor_mb;
  row.gflop = 3.0 *
              (mixer_projection_flops(c, mixer, options.batch, n) +
               mixer_core_flops(c, mixer, options.batch, n, causal)) /
              1e9;
  return row;
}

std::vector<ScalingRow> run_scaling(const ModelConfig& config, const ScalingOptions& options,
                                    const std::function<void(const ScalingRow&)>& on_row) {
  const std::vector<MixerKind> mixers = options.mixers.empty() ? default_scaling_mixers(config) : options.mixers;
  std::vector<bool> causalities;
  if (options.causal) causalities.push_back(true);
  if (options.bidirectional) causalities.push_back(false);
  std::vector<ScalingRow> rows;
  for (MixerKind mixer : mixers)
    for (bool causal : causalities)
      for (int64_t n : options.seq_lens) {
        ScalingRow row;
        std::string reason;
        if (quadratic_too_big(config, mixer, n, options, reason)) {
          row = skeleton(mixer, n, causal, options.batch);
          row.skipped = true;
          row.reason = reason;
        } else if (!options.worker_exe.empty()) {
          row = measure_in_child(config, mixer, n, causal, options);
        } else {
          row = measure_mixer(config, mixer, n, causal, options);
          pool_release_cached();  // the next size reuses nothing: give the memory back
        }
        if (on_row) on_row(row);
        rows.push_back(std::move(row));
      }
  return rows;
}

int scaling_worker_main(const std::string& request_json) {
  nlohmann::json req;
  try {
    req = nlohmann::json::parse(request_json);
  } catch (const std::exception& e) {
    throw ConfigError(std::string("bench --scaling-worker: bad request JSON: ") + e.what());
  }
  const ModelConfig config = model_config_from_json(req.at("model"), "bench --scaling-worker");
  ScalingOptions options;
  options.batch = req.at("batch").get<int64_t>();
  options.reps = req.at("reps").get<int>();
  options.warmup = req.at("warmup").get<int>();
  options.seed = req.at("seed").get<uint64_t>();
  set_num_threads(req.at("threads").get<int>());
  const MixerKind mixer = parse_mixer_kind(req.at("mixer").get<std::string>());
  // Warm up what every measurement shares, so the baseline holds it: OpenMP's thread pool and
  // oneDNN's engine.
  cpu_engine();
  double sink = 0;
#pragma omp parallel for reduction(+ : sink)
  for (int i = 0; i < 1024; ++i) sink += i;
  if (sink < 0) std::printf("%f", sink);
  const bool reset = reset_peak_rss();
  const double base_kib = proc_status_kib("VmRSS");
  ScalingRow row = measure_mixer(config, mixer, req.at("seq_len").get<int64_t>(),
                                 req.at("causal").get<bool>(), options);
  const double hwm_kib = proc_status_kib("VmHWM");
  if (reset && base_kib >= 0 && hwm_kib >= 0) {
    row.peak_mb = (hwm_kib - base_kib) / 1024.0;
    row.memory = "rss";
  } else {
    spdlog::warn("bench: cannot reset the RSS high-water mark; peak_mb is the tensor high-water mark");
  }
  std::cout << scaling_row_json(row).dump() << std::endl;
  return 0;
}

nlohmann::json scaling_row_json(const ScalingRow& row) {
  nlohmann::json j = {{"mixer", row.mixer}, {"seq_len", row.seq_len}, {"causal", row.causal}, {"batch", row.batch}};
  if (row.skipped) {
    j["skipped"] = row.reason;
    return j;
  }
  j["fwd_bwd_s"] = row.fwd_bwd_s;
  j["fwd_s"] = row.fwd_s;
  j["peak_mb"] = row.peak_mb;
  j["memory"] = row.memory;
  j["tensor_mb"] = row.tensor_mb;
  j["saved_mb"] = row.saved_mb;
  j["gflop"] = row.gflop;
  j["gflops"] = row.fwd_bwd_s > 0 ? row.gflop / row.fwd_bwd_s : 0.0;
  return j;
}

ScalingRow scaling_row_from_json(const nlohmann::json& j) {
  ScalingRow row;
  row.mixer = j.at("mixer").get<std::string>();
  row.seq_len = j.at("seq_len").get<int64_t>();
  row.causal = j.at("causal").get<bool>();
  row.batch = j.value("batch", int64_t{1});
  if (j.contains("skipped")) {
    row.skipped = true;
    row.reason = j.at("skipped").get<std::string>();
    return row;
  }
  row.fwd_bwd_s = j.at("fwd_bwd_s").get<double>();
  row.fwd_s = j.value("fwd_s", 0.0);
  row.peak_mb = j.at("peak_mb").get<double>();
  row.memory = j.value("memory", std::string("pool"));
  row.tensor_mb = j.value("tensor_mb", 0.0);
  row.saved_mb = j.value("saved_mb", 0.0);
  row.gflop = j.value("gflop", 0.0);
  return row;
}

nlohmann::json scaling_ratios_json(const std::vector<ScalingRow>& rows) {
  // First and last measured row per (mixer, causal), in the order rows were produced.
  std::vector<std::pair<std::string, bool>> order;
  std::map<std::pair<std::string, bool>, std::pair<const ScalingRow*, const ScalingRow*>> ends;
  for (const ScalingRow& row : rows) {
    if (row.skipped) continue;
    const auto key = std::make_pair(row.mixer, row.causal);
    auto it = ends.find(key);
    if (it == ends.end()) {
      order.push_back(key);
      ends[key] = {&row, &row};
    } else {
      if (row.seq_len < it->second.first->seq_len) it->second.first = &row;
      if (row.seq_len > it->second.second->seq_len) it->second.second = &row;
    }
  }
  nlohmann::json out = nlohmann::json::array();
  for (const auto& key : order) {
    const auto [lo, hi] = ends[key];
    if (lo == hi) continue;
    out.push_back({{"mixer", key.first},
                   {"causal", key.second},
                   {"from", lo->seq_len},
                   {"to", hi->seq_len},
                   {"n_ratio", static_cast<double>(hi->seq_len) / static_cast<double>(lo->seq_len)},
                   {"time_ratio", lo->fwd_bwd_s > 0 ? hi->fwd_bwd_s / lo->fwd_bwd_s : 0.0},
                   {"memory_ratio", lo->peak_mb > 0 ? hi->peak_mb / lo->peak_mb : 0.0}});
  }
  return out;
}

std::string format_scaling_table(const std::vector<ScalingRow>& rows) {
  std::ostringstream out;
  char buf[256];
  std::string group;
  const ScalingRow* first = nullptr;
  for (const ScalingRow& row : rows) {
    const std::string g = row.mixer + (row.causal ? " (causal)" : " (bidirectional)");
    if (g != group) {
      group = g;
      first = nullptr;
      std::snprintf(buf, sizeof buf, "\n%s, batch %lld\n%8s %11s %10s %10s %9s %9s %9s\n", g.c_str(),
                    static_cast<long long>(row.batch), "n", "fwd+bwd s", "fwd s", "peak MB", "GFLOP/s",
                    "t/t0", "mem/mem0");
      out << buf;
    }
    if (row.skipped) {
      std::snprintf(buf, sizeof buf, "%8lld   skipped: %s\n", static_cast<long long>(row.seq_len),
                    row.reason.c_str());
      out << buf;
      continue;
    }
    if (!first) first = &row;
    std::snprintf(buf, sizeof buf, "%8lld %11.4f %10.4f %10.1f %9.1f %9.2f %9.2f\n",
                  static_cast<long long>(row.seq_len), row.fwd_bwd_s, row.fwd_s, row.peak_mb,
                  row.fwd_bwd_s > 0 ? row.gflop / row.fwd_bwd_s : 0.0,
                  first->fwd_bwd_s > 0 ? row.fwd_bwd_s / first->fwd_bwd_s : 0.0,
                  first->peak_mb > 0 ? row.peak_mb / first->peak_mb : 0.0);
    out << buf;
  }
  return out.str();
}

}  // namespace tn
