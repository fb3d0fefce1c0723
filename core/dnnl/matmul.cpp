#include "core/dnnl/matmul.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/dnnl/engine.h"

namespace tn {
namespace {

using dnnl::memory;
using dt = memory::data_type;

struct ShapeHash {
  size_t operator()(const MatmulShape& s) const {
    size_t h = std::hash<int64_t>()(s.batch);
    auto mix = [&h](int64_t v) { h ^= std::hash<int64_t>()(v) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
    mix(s.m);
    mix(s.n);
    mix(s.k);
    mix(s.trans_a | (s.trans_b << 1) | (s.accumulate << 2) | (s.bias << 3) | (s.bf16 << 4));
    return h;
  }
};

struct Cached {
  dnnl::matmul prim;
  memory::desc a_md, b_md, c_md, bias_md;
};

memory::desc matrix_desc(int64_t batch, int64_t rows, int64_t cols, bool transposed,
                         dt type = dt::f32) {
  // Logical [batch, rows, cols]; stored as [batch, cols, rows] when transposed.
  memory::dims dims = {batch, rows, cols};
  memory::dims strides = transposed ? memory::dims{rows * cols, 1, rows}
                                    : memory::dims{rows * cols, cols, 1};
  return memory::desc(dims, type, strides);
}

/// f32 → bf16 conversion of a [batch, rows, cols] operand (round to nearest even) into a plain
/// row-major bf16 copy, transposing on the way when the source is stored transposed: a cached
/// oneDNN reorder. A transposed bf16 A would send oneDNN to a slow path.
void to_bf16(const float* src, uint16_t* dst, int64_t batch, int64_t rows, int64_t cols,
             bool transposed) {
  using Key = std::tuple<int64_t, int64_t, int64_t, bool>;
  struct Entry {
    dnnl::reorder prim;
    memory::desc from, to;
  };
  static std::mutex mutex;
  static std::map<Key, Entry> cache;
  Entry* entry;
  {
    std::lock_guard<std::mutex> lock(mutex);
    const Key key{batch, rows, cols, transposed};
    auto it = cache.find(key);
    if (it == cache.end()) {
      memory::desc from = matrix_desc(batch, rows, cols, transposed, dt::f32);
      memory::desc to = matrix_desc(batch, rows, cols, false, dt::bf16);
      dnnl::reorder::primitive_desc pd(cpu_engine(), from, cpu_engine(), to);
      it = cache.emplace(key, Entry{dnnl::reorder(pd), from, to}).first;
    }
    entry = &it->second;
  }
  memory from(entry->from, cpu_engine(), const_cast<float*>(src));
  memory to(entry->to, cpu_engine(), dst);
  entry->prim.execute(cpu_stream(), from, to);
}

Cached build(const MatmulShape& s) {
  Cached c;
  const dt operand = s.bf16 ? dt::bf16 : dt::f32;
  c.a_md = matrix_desc(s.batch, s.m, s.k, s.trans_a && !s.bf16, operand);  // bf16 A: made plain
  c.b_md = matrix_desc(s.batch, s.k, s.n, s.trans_b, operand);
  c.c_md = matrix_desc(s.batch, s.m, s.n, false);
  if (s.bias) c.bias_md = memory::desc({1, 1, s.n}, dt::f32, memory::dims{s.n, s.n, 1});
  dnnl::primitive_attr attr;
  if (s.accumulate) {
    dnnl::post_ops ops;
    ops.append_sum(1.0f);
    attr.set_post_ops(ops);
  }
  auto desc = s.bias ? dnnl::matmul::desc(c.a_md, c.b_md, c.bias_md, c.c_md)
                     : dnnl::matmul::desc(c.a_md, c.b_md, c.c_md);
  dnnl::matmul::primitive_desc pd(desc, attr, cpu_engine());
  c.prim = dnnl::matmul(pd);
  return c;
}

}  // namespace

static std::mutex& record_mutex() {
  static std::mutex m;
  return m;
}
static std::atomic<bool> g_recording{false};
static std::vector<MatmulShape>& recorded() {
  static std::vector<MatmulShape> shapes;
  return shapes;
}

void matmul_record_begin() {
  std::lock_guard<std::mutex> lock(record_mutex());
  recorded().clear();
  g_recording = true;
}

std::vector<MatmulShape> matmul_record_end() {
  std::lock_guard<std::mutex> lock(record_mutex());
  g_recording = false;
  return std::move(recorded());
}

double matmul_replay_seconds(const std::vector<MatmulShape>& shapes) {
  int64_t na = 0, nb = 0, nc = 0, nbias = 0;
  for (const MatmulShape& s : shapes) {
    na = std::max(na, s.batch * s.m * s.k);
    nb = std::max(nb, s.batch * s.k * s.n);
    nc = std::max(nc, s.batch * s.m * s.n);
    nbias = std::max(nbias, s.n);
  }
  std::vector<float> a(na, 0.01f), b(nb, 0.02f), c(nc, 0.0f), bias(nbias, 0.0f);
  const auto start = std::chrono::steady_clock::now();
  for (const MatmulShape& s : shapes) matmul(s, a.data(), b.data(), c.data(), bias.data());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void to_bf16_flat(const float* src, uint16_t* dst, int64_t n) {
  if (n > 0) to_bf16(src, dst, 1, 1, n, false);
}

void matmul(const MatmulShape& s, const float* a, const float* b, float* c, const float* bias,
            const uint16_t* b_bf16) {
  if (s.m == 0 || s.n == 0 || s.batch == 0) return;
  if (s.k == 0) {
    if (!s.accumulate)
      for (int64_t i = 0; i < s.batch * s.m * s.n; ++i) c[i] = bias ? bias[i % s.n] : 0.0f;
    return;
  }
  static std::mutex mutex;
  static std::unordered_map<MatmulShape, Cached, ShapeHash> cache;
  if (g_recording) {
    std::lock_guard<std::mutex> lock(record_mutex());
    if (g_recording) recorded().push_back(s);
  }
  const Cached* entry;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(s);
    if (it == cache.end()) it = cache.emplace(s, build(s)).first;
    entry = &it->second;
  }
  auto& eng = cpu_engine();
  const void* a_ptr = a;
  const void* b_ptr = b;
  if (s.bf16) {  // per-thread staging buffers, grown once and reused
    thread_local std::vector<uint16_t> a16, b16;
    const int64_t na = s.batch * s.m * s.k, nb = s.batch * s.k * s.n;
    if (static_cast<int64_t>(a16.size()) < na) a16.resize(na);
    to_bf16(a, a16.data(), s.batch, s.m, s.k, s.trans_a);
    a_ptr = a16.data();
    if (b_bf16) {
      b_ptr = b_bf16;
    } else {
      if (static_cast<int64_t>(b16.size()) < nb) b16.resize(nb);
      to_bf16(b, b16.data(), s.batch, s.k, s.n, false);  // B keeps its layout (trans_b: [N,K])
      b_ptr = b16.data();
    }
  }
  memory a_mem(entry->a_md, eng, const_cast<void*>(a_ptr));
  memory b_mem(entry->b_md, eng, const_cast<void*>(b_ptr));
  memory c_mem(entry->c_md, eng, c);
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, b_mem}, {DNNL_ARG_DST, c_mem}};
  if (s.bias) args.emplace(DNNL_ARG_BIAS, memory(entry->bias_md, eng, const_cast<float*>(bias)));
  entry->prim.execute(cpu_stream(), args);
  cpu_stream().wait();
}

void matmul_naive(const MatmulShape& s, const float* a, const float* b, float* c,
                  const float* bias) {
  for (int64_t bt = 0; bt < s.batch; ++bt) {
    const float* ab = a + bt * s.m * s.k;
    const float* bb = b + bt * s.k * s.n;
    float* cb = c + bt * s.m * s.n;
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) {
        double acc = bias ? bias[j] : 0.0;
        for (int64_t p = 0; p < s.k; ++p) {
          const double av = s.trans_a ? ab[p * s.m + i] : ab[i * s.k + p];
          const double bv = s.trans_b ? bb[j * s.k + p] : bb[p * s.n + j];
          acc += av * bv;
        }
        cb[i * s.n + j] = static_cast<float>(s.accumulate ? cb[i * s.n + j] + acc : acc);
      }
  }
}

}  // namespace tn
