#include "core/runtime/dnnl/matmul_probe.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <new>
#include <unordered_map>
#include <vector>

#include "core/runtime/dnnl/bf16.h"
#include "core/runtime/dnnl/engine.h"
#include "core/runtime/dnnl/matmul.h"
#include "core/runtime/math/stats.h"
#include "core/runtime/rng.h"

namespace tn {
namespace {

using dnnl::memory;
using dt = memory::data_type;
using tag = memory::format_tag;

/// 64-byte aligned, freed with std::free.
struct AlignedBuffer {
  void* ptr = nullptr;
  explicit AlignedBuffer(size_t bytes) {
    bytes = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
    ptr = std::aligned_alloc(64, bytes);
    if (!ptr) throw std::bad_alloc();
  }
  ~AlignedBuffer() { std::free(ptr); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
};

/// count values uniform in [-1, 1), as f32 or rounded to bf16, from the project's RNG.
void fill(void* data, dt type, int64_t count, uint64_t seed) {
  Rng rng(seed);
  for (int64_t i = 0; i < count; ++i) {
    const float v = static_cast<float>(2.0 * rng.uniform() - 1.0);
    if (type == dt::f32)
      static_cast<float*>(data)[i] = v;
    else
      static_cast<uint16_t*>(data)[i] = to_bf16_bits(v);
  }
}

}  // namespace

const char* to_string(ProbeType type) { return type == ProbeType::F32 ? "f32" : "bf16"; }

MatmulProbeResult probe_matmul(ProbeType type, int64_t m, int64_t n, int64_t k, int reps,
                               int warmup) {
  MatmulProbeResult r;
  r.m = m;
  r.n = n;
  r.k = k;
  r.reps = std::max(reps, 1);
  const dt in_type = type == ProbeType::F32 ? dt::f32 : dt::bf16;
  if (type == ProbeType::BF16 && !bf16_matmul_native()) {
    // The emulation is the f32 kernel: timing it would report the f32 peak as a bf16 one.
    r.error = "oneDNN has no bf16 matmul for this CPU (bf16 products are emulated in f32); not timed";
    return r;
  }
  try {
    auto& eng = cpu_engine();
    const memory::desc a_md({m, k}, in_type, tag::ab);
    const memory::desc b_md({k, n}, in_type, tag::ab);
    const memory::desc c_md({m, n}, dt::f32, tag::ab);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), eng);
    r.impl = pd.impl_info_str();
    if (r.impl.find("ref") != std::string::npos) {
      r.error = std::string("oneDNN has no optimised ") + to_string(type) +
                " matmul for this CPU (implementation " + r.impl + "); not timed";
      return r;
    }
    const size_t in_bytes = type == ProbeType::F32 ? 4 : 2;
    AlignedBuffer a(static_cast<size_t>(m * k) * in_bytes), b(static_cast<size_t>(k * n) * in_bytes),
        c(static_cast<size_t>(m * n) * 4);
    fill(a.ptr, in_type, m * k, 1);
    fill(b.ptr, in_type, k * n, 2);
    fill(c.ptr, dt::f32, m * n, 3);
    dnnl::matmul prim(pd);
    memory a_mem(a_md, eng, a.ptr), b_mem(b_md, eng, b.ptr), c_mem(c_md, eng, c.ptr);
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, b_mem}, {DNNL_ARG_DST, c_mem}};
    auto& stream = cpu_stream();
    for (int i = 0; i < warmup; ++i) {
      prim.execute(stream, args);
      stream.wait();
    }
    std::vector<double> times;
    for (int i = 0; i < r.reps; ++i) {
      const auto start = std::chrono::steady_clock::now();
      prim.execute(stream, args);
      stream.wait();
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    r.best_s = *std::min_element(times.begin(), times.end());
    r.median_s = median_of(times);
    const double flop = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
    r.gflops = flop / r.best_s / 1e9;
    r.median_gflops = flop / r.median_s / 1e9;
    r.ok = true;
  } catch (const dnnl::error& e) {
    r.error = std::string("oneDNN ") + to_string(type) + " matmul failed: " + e.what();
  }
  return r;
}

}  // namespace tn
