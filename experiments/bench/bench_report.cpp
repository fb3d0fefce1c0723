#include "experiments/bench/bench_report.h"

#include <cstdarg>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "core/runtime/dnnl/engine.h"
#include "core/runtime/dnnl/matmul.h"
#include "core/runtime/math/isa_clones.h"
#include "core/platform/system.h"

namespace tn {

namespace {

using nlohmann::json;

json nullable(bool ok, double value) { return ok ? json(value) : json(nullptr); }

json probe_json(const MatmulProbeResult& r) {
  json j = {{"m", r.m}, {"n", r.n}, {"k", r.k}, {"impl", r.impl}};
  if (r.ok) {
    j["gflops"] = r.gflops;
    j["median_gflops"] = r.median_gflops;
    j["best_s"] = r.best_s;
    j["reps"] = r.reps;
  } else {
    j["error"] = r.error;
  }
  return j;
}

MatmulProbeResult probe_from_json(const json& j) {
  MatmulProbeResult r;
  r.m = j.at("m").get<int64_t>();
  r.n = j.at("n").get<int64_t>();
  r.k = j.at("k").get<int64_t>();
  r.impl = j.at("impl").get<std::string>();
  r.ok = !j.contains("error");
  if (r.ok) {
    r.gflops = j.at("gflops").get<double>();
    r.median_gflops = j.at("median_gflops").get<double>();
    r.best_s = j.at("best_s").get<double>();
    r.reps = j.at("reps").get<int>();
  } else {
    r.error = j.at("error").get<std::string>();
  }
  return r;
}

Precision precision_from(const std::string& name) {
  if (name == to_string(Precision::F32)) return Precision::F32;
  if (name == to_string(Precision::BF16)) return Precision::BF16;
  throw std::invalid_argument("bench report: unknown precision \"" + name + "\"");
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * fraction);
  return buf;
}

/// printf into a std::string.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

/// The machine facts that decide the f32 and bf16 figures, so reports of two machines can be told
/// apart: the CPU, its AVX2 / AVX-512 / BF16 / AMX features, oneDNN's kernel ISA and this build's.
json cpu_json() {
  const CpuInfo c = cpu_info();
  return {{"model", c.model},       {"avx2", c.avx2},         {"avx512f", c.avx512f},
          {"avx512_bf16", c.avx512_bf16}, {"amx_bf16", c.amx_bf16}, {"onednn_isa", onednn_cpu_isa()},
          {"bf16_matmul_native", bf16_matmul_native()}};
}

/// One line of cpu_json for the readable report.
std::string cpu_line() {
  const CpuInfo c = cpu_info();
  return format("cpu: %s (AVX2 %s, AVX-512 %s, AVX-512 BF16 %s, AMX BF16 %s); oneDNN kernels %s, bf16 products %s; "
                "own kernels %s\n",
                c.model.empty() ? "unknown" : c.model.c_str(), c.avx2 ? "yes" : "no", c.avx512f ? "yes" : "no",
                c.avx512_bf16 ? "yes" : "no", c.amx_bf16 ? "yes" : "no", onednn_cpu_isa(),
                bf16_matmul_native() ? "native" : "emulated in f32", kernel_isa());
}

}  // namespace

json BenchReport::to_json() const {
  json out;
  const MatmulProbeResult none;
  const MatmulProbeResult& f32 = peak ? peak->f32 : none;
  const MatmulProbeResult& bf16 = peak ? peak->bf16 : none;
  if (model) {
    const BenchResult& r = model->result;
    out["params"] = r.params;
    out["batch"] = model->batch;
    out["seq_len"] = model->seq_len;
    out["vocab_size"] = model->vocab_size;
    out["last_loss"] = r.last_loss;
    out["precision"] = std::string(tn::to_string(model->precision));
  }
  if (precision_comparison) {
    const PrecisionComparison& c = *precision_comparison;
    out["precision_comparison"] = {{"pairs", c.f32_step_s.size()},    {"f32_step_s", c.f32_step_s},
                                   {"bf16_step_s", c.bf16_step_s},    {"f32_median_s", c.f32_median_s},
                                   {"bf16_median_s", c.bf16_median_s}, {"speedup_median", c.speedup_median},
                                   {"speedup_of_medians", c.speedup_of_medians}};
  }
  out["peak_rss_mb"] = peak_rss_mb;
  out["threads"] = threads;
  out["kernel_isa"] = kernel_isa();
  out["cpu"] = cpu_json();
  out["peak_gflops"] = {{"f32", nullable(f32.ok, f32.gflops)}, {"bf16", nullable(bf16.ok, bf16.gflops)}};
  if (peak) out["matmul_probe"] = {{"f32", probe_json(f32)}, {"bf16", probe_json(bf16)}};
  if (model) {
    const BenchResult& r = model->result;
    const ModelFlops& f = r.flops;
    out["train"] = {{"tokens_per_s", r.train_tokens_per_s},
                    {"step_s", r.train_step_s},
                    {"step_median_s", r.train_step_median_s},
                    {"step_times_s", r.train_step_times},
                    {"peak_rss_mb", r.train_peak_rss_mb},
                    {"matmul_only_s", r.matmul_only_s},
                    {"matmul_calls", r.matmul_calls},
                    {"step_over_matmul", r.step_over_matmul()},
                    {"matmul_only_median_s", r.matmul_only_median_s},
                    {"matmul_replay_times_s", r.matmul_replay_times},
                    {"step_over_matmul_median", r.step_over_matmul_median()},
                    {"model_gflops", r.train_gflops},
                    {"mfu", nullable(f32.ok, mfu(r.train_gflops, f32))},
                    // as the text: bf16's peak only where it is the higher (a slower bf16 bounds nothing)
                    {"mfu_bf16", nullable(bf16.ok && (!f32.ok || bf16.gflops > f32.gflops), mfu(r.train_gflops, bf16))}};
    out["infer"] = {{"tokens_per_s", r.infer_tokens_per_s},
                    {"model_gflops", r.infer_gflops},
                    {"mfu", nullable(f32.ok, mfu(r.infer_gflops, f32))}};
    out["model_gflop_per_step"] = f.train_step() / 1e9;
    out["mfu"] = nullable(f32.ok, mfu(r.train_gflops, f32));
    out["flops"] = {{"forward_gflop", f.forward() / 1e9},      {"train_step_gflop", f.train_step() / 1e9},
                    {"projections_gflop", f.projections / 1e9}, {"attention_gflop", f.attention / 1e9},
                    {"channel_mixer_gflop", f.channel_mixer / 1e9}, {"head_gflop", f.head / 1e9},
                    {"input_gflop", f.input / 1e9}};
  }
  if (scaling_setup) {
    json measured = json::array(), skipped = json::array();
    for (const ScalingRow& row : scaling) (row.skipped ? skipped : measured).push_back(scaling_row_json(row));
    out["scaling"] = measured;
    out["scaling_skipped"] = skipped;
    out["scaling_ratios"] = scaling_ratios_json(scaling);
    out["scaling_config"] = {{"d_model", scaling_setup->d_model}, {"n_heads", scaling_setup->n_heads},
                             {"batch", scaling_setup->batch},     {"reps", scaling_setup->reps},
                             {"memory", scaling_setup->memory}};
  }
  return out;
}

BenchReport BenchReport::from_json(const json& o) {
  if (!o.is_object()) throw std::invalid_argument("bench report: expected a JSON object");
  BenchReport b;
  b.peak_rss_mb = o.at("peak_rss_mb").get<double>();
  b.threads = o.at("threads").get<int>();
  if (o.contains("matmul_probe"))
    b.peak = PeakMatmul{probe_from_json(o.at("matmul_probe").at("f32")), probe_from_json(o.at("matmul_probe").at("bf16"))};
  if (o.contains("train")) {
    ModelRun m;
    BenchResult& r = m.result;
    m.batch = o.at("batch").get<int64_t>();
    m.seq_len = o.at("seq_len").get<int64_t>();
    m.vocab_size = o.at("vocab_size").get<int64_t>();
    m.precision = precision_from(o.at("precision").get<std::string>());
    r.params = o.at("params").get<int64_t>();
    r.last_loss = o.at("last_loss").get<double>();
    const json& t = o.at("train");
    r.train_tokens_per_s = t.at("tokens_per_s").get<double>();
    r.train_step_s = t.at("step_s").get<double>();
    r.train_step_median_s = t.at("step_median_s").get<double>();
    r.train_step_times = t.at("step_times_s").get<std::vector<double>>();
    r.train_peak_rss_mb = t.at("peak_rss_mb").get<double>();
    r.matmul_only_s = t.at("matmul_only_s").get<double>();
    r.matmul_only_median_s = t.value("matmul_only_median_s", r.matmul_only_s);  // absent before 2026-12-05
    r.matmul_replay_times = t.value("matmul_replay_times_s", std::vector<double>{});
    r.matmul_calls = t.at("matmul_calls").get<int64_t>();
    r.train_gflops = t.at("model_gflops").get<double>();
    const json& i = o.at("infer");
    r.infer_tokens_per_s = i.at("tokens_per_s").get<double>();
    r.infer_gflops = i.at("model_gflops").get<double>();
    const json& f = o.at("flops");
    r.flops.projections = f.at("projections_gflop").get<double>() * 1e9;
    r.flops.attention = f.at("attention_gflop").get<double>() * 1e9;
    r.flops.channel_mixer = f.at("channel_mixer_gflop").get<double>() * 1e9;
    r.flops.head = f.at("head_gflop").get<double>() * 1e9;
    r.flops.input = f.value("input_gflop", 0.0) * 1e9;  // absent before pixel inputs
    r.peak_rss_mb = o.at("peak_rss_mb").get<double>();
    b.model = m;
  }
  if (o.contains("precision_comparison")) {
    const json& c = o.at("precision_comparison");
    PrecisionComparison p;
    p.f32_step_s = c.at("f32_step_s").get<std::vector<double>>();
    p.bf16_step_s = c.at("bf16_step_s").get<std::vector<double>>();
    p.f32_median_s = c.at("f32_median_s").get<double>();
    p.bf16_median_s = c.at("bf16_median_s").get<double>();
    p.speedup_median = c.at("speedup_median").get<double>();
    p.speedup_of_medians = c.at("speedup_of_medians").get<double>();
    b.precision_comparison = p;
  }
  if (o.contains("scaling_config")) {
    const json& s = o.at("scaling_config");
    b.scaling_setup = ScalingSetup{s.at("d_model").get<int64_t>(), s.at("n_heads").get<int64_t>(),
                                   s.at("batch").get<int64_t>(), s.at("reps").get<int>(),
                                   s.at("memory").get<std::string>()};
    for (const char* key : {"scaling", "scaling_skipped"})
      for (const json& row : o.at(key)) b.scaling.push_back(scaling_row_from_json(row));
  }
  return b;
}

std::string BenchReport::to_text() const {
  std::ostringstream out;
  const MatmulProbeResult none;
  const MatmulProbeResult& f32 = peak ? peak->f32 : none;
  const MatmulProbeResult& bf16 = peak ? peak->bf16 : none;
  if (model) {
    const BenchResult& r = model->result;
    const ModelFlops& f = r.flops;
    out << "train: " << static_cast<int64_t>(r.train_tokens_per_s) << " tokens/s (" << r.train_step_s
        << " s/step)\ninfer: " << static_cast<int64_t>(r.infer_tokens_per_s)
        << " tokens/s\npeak RSS: " << static_cast<int64_t>(peak_rss_mb) << " MB\n"
        << "params: " << r.params << ", batch " << model->batch << " x seq_len " << model->seq_len << ", vocab "
        << model->vocab_size << ", " << threads << " threads, precision " << tn::to_string(model->precision) << "\n";
    out << format("model FLOPs: %.2f GFLOP per training step (3 x forward %.2f: projections %.2f, "
                  "attention %.2f, channel mixer %.2f, head %.2f)\n",
                  f.train_step() / 1e9, f.forward() / 1e9, f.projections / 1e9, f.attention / 1e9,
                  f.channel_mixer / 1e9, f.head / 1e9);
    out << format("achieved: train %.1f GFLOP/s, infer %.1f GFLOP/s\n", r.train_gflops, r.infer_gflops);
    out << format("step vs its matrix products alone: %.3f s / %.3f s = %.3f (%lld products)\n", r.train_step_s,
                  r.matmul_only_s, r.step_over_matmul(), static_cast<long long>(r.matmul_calls));
    out << format("median step vs median replay: %.3f s / %.3f s = %.3f\n", r.train_step_median_s,
                  r.matmul_only_median_s, r.step_over_matmul_median());
  } else {
    out << "peak RSS: " << static_cast<int64_t>(peak_rss_mb) << " MB, " << threads << " threads\n";
  }
  out << cpu_line();
  if (peak)
    for (const MatmulProbeResult* p : {&f32, &bf16}) {
      const char* name = p == &f32 ? "f32" : "bf16";
      if (p->ok)
        out << format("peak matmul %s: %.1f GFLOP/s (%lld^3, best of %d; oneDNN %s)\n", name, p->gflops,
                      static_cast<long long>(p->m), p->reps, p->impl.c_str());
      else
        out << format("peak matmul %s: not measured (%s)\n", name, p->error.c_str());
    }
  if (model && f32.ok) {
    const BenchResult& r = model->result;
    out << "MFU: train " << percent(mfu(r.train_gflops, f32)) << " of the f32 peak"
        // bf16's peak where it is the higher one (a bf16 probe slower than f32 bounds nothing)
        << (bf16.ok && bf16.gflops > f32.gflops ? " (" + percent(mfu(r.train_gflops, bf16)) + " of bf16)" : "")
        << ", infer "
        << percent(mfu(r.infer_gflops, f32)) << "\n";
  }
  if (precision_comparison) {
    const PrecisionComparison& c = *precision_comparison;
    out << format("f32 vs bf16, %lld interleaved pairs: median step %.3f s vs %.3f s; bf16 speed-up "
                  "%.3fx (median of pair ratios), %.3fx (ratio of medians)\n",
                  static_cast<long long>(c.f32_step_s.size()), c.f32_median_s, c.bf16_median_s, c.speedup_median,
                  c.speedup_of_medians);
  }
  if (scaling_setup && !scaling.empty()) {
    out << "\nscaling: one token-mixer layer, d_model " << scaling_setup->d_model << ", " << scaling_setup->n_heads
        << " heads; forward + backward, median of " << scaling_setup->reps << "; peak MB = "
        << (scaling_setup->memory == "pool" ? "tensor high-water mark (in process)"
                                            : "RSS high-water mark of a child process per point")
        << "\n"
        << format_scaling_table(scaling);
  }
  return out.str();
}

}  // namespace tn
