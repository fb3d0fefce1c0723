#include "core/dnnl/matmul.h"

#include <mutex>
#include <unordered_map>

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
    mix(s.trans_a | (s.trans_b << 1) | (s.accumulate << 2) | (s.bias << 3));
    return h;
  }
};

struct Cached {
  dnnl::matmul prim;
  memory::desc a_md, b_md, c_md, bias_md;
};

memory::desc matrix_desc(int64_t batch, int64_t rows, int64_t cols, bool transposed) {
  // Logical [batch, rows, cols]; stored as [batch, cols, rows] when transposed.
  memory::dims dims = {batch, rows, cols};
  memory::dims strides = transposed ? memory::dims{rows * cols, 1, rows}
                                    : memory::dims{rows * cols, cols, 1};
  return memory::desc(dims, dt::f32, strides);
}

Cached build(const MatmulShape& s) {
  Cached c;
  c.a_md = matrix_desc(s.batch, s.m, s.k, s.trans_a);
  c.b_md = matrix_desc(s.batch, s.k, s.n, s.trans_b);
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

void matmul(const MatmulShape& s, const float* a, const float* b, float* c, const float* bias) {
  if (s.m == 0 || s.n == 0 || s.batch == 0) return;
  if (s.k == 0) {
    if (!s.accumulate)
      for (int64_t i = 0; i < s.batch * s.m * s.n; ++i) c[i] = bias ? bias[i % s.n] : 0.0f;
    return;
  }
  static std::mutex mutex;
  static std::unordered_map<MatmulShape, Cached, ShapeHash> cache;
  const Cached* entry;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(s);
    if (it == cache.end()) it = cache.emplace(s, build(s)).first;
    entry = &it->second;
  }
  auto& eng = cpu_engine();
  memory a_mem(entry->a_md, eng, const_cast<float*>(a));
  memory b_mem(entry->b_md, eng, const_cast<float*>(b));
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
