#include "core/runtime/dnnl/matmul.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include <omp.h>
#include <spdlog/spdlog.h>

#include "core/runtime/dnnl/engine.h"
#include "core/runtime/dnnl/matmul_tiling.h"
#include "core/runtime/dnnl/primitive_cache.h"

namespace tn {
namespace {

using dnnl::memory;
using dt = memory::data_type;

/// A primitive's key: one tile of a product (core/runtime/dnnl/matmul_tiling.h; batch 1), with the leading
/// dimensions its operands keep inside the whole product (0: dense): a transposed A's tile is read
/// with the whole product's m, a column tile of a plain B and of C with its n. Tiles of equal shape
/// share a primitive: with a scratchpad the caller provides, oneDNN lets threads run one primitive
/// at the same time.
struct PrimKey {
  MatmulShape s;
  int64_t a_ld = 0, b_ld = 0, c_ld = 0;
  bool operator==(const PrimKey&) const = default;
};

struct KeyHash {
  size_t operator()(const PrimKey& key) const {
    const MatmulShape& s = key.s;
    const std::hash<int64_t> hash;
    size_t h = hash(s.batch);
    for (int64_t v : {s.m, s.n, s.k,
                      int64_t{s.trans_a | (s.trans_b << 1) | (s.accumulate << 2) | (s.bias << 3) |
                              (s.bf16 << 4)},
                      key.a_ld, key.b_ld, key.c_ld})
      h = hash_mix(h, hash(v));
    return h;
  }
};

struct Cached {
  dnnl::matmul prim;
  memory::desc a_md, b_md, c_md, bias_md, scratch_md;
};

/// Logical [batch, rows, cols]; stored as [batch, cols, rows] when transposed, with `ld` (0: dense)
/// between the stored rows.
memory::desc matrix_desc(int64_t batch, int64_t rows, int64_t cols, bool transposed,
                         dt type = dt::f32, int64_t ld = 0) {
  memory::dims dims = {batch, rows, cols};
  const int64_t t_ld = ld > 0 ? ld : rows, n_ld = ld > 0 ? ld : cols;
  memory::dims strides = transposed ? memory::dims{t_ld * cols, 1, t_ld}
                                    : memory::dims{rows * n_ld, n_ld, 1};
  return memory::desc(dims, type, strides);
}

/// The primitive for key, with a scratchpad the caller provides (scratchpad_mode::user): each
/// thread passes its own, so two parts of a product never share one.
Cached build(const PrimKey& key) {
  const MatmulShape& s = key.s;
  Cached c;
  const dt operand = s.bf16 ? dt::bf16 : dt::f32;
  c.a_md = matrix_desc(s.batch, s.m, s.k, s.trans_a, operand, key.a_ld);
  c.b_md = matrix_desc(s.batch, s.k, s.n, s.trans_b, operand, key.b_ld);
  c.c_md = matrix_desc(s.batch, s.m, s.n, false, dt::f32, key.c_ld);
  if (s.bias) c.bias_md = memory::desc({1, 1, s.n}, dt::f32, memory::dims{s.n, s.n, 1});
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (s.accumulate) {
    dnnl::post_ops ops;
    ops.append_sum(1.0f);
    attr.set_post_ops(ops);
  }
  auto desc = s.bias ? dnnl::matmul::desc(c.a_md, c.b_md, c.bias_md, c.c_md)
                     : dnnl::matmul::desc(c.a_md, c.b_md, c.c_md);
  dnnl::matmul::primitive_desc pd(desc, attr, cpu_engine());
  c.scratch_md = pd.scratchpad_desc();
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
  const bool any_f32 = std::any_of(shapes.begin(), shapes.end(), [](auto& s) { return !s.bf16; });
  const bool any_bf16 = std::any_of(shapes.begin(), shapes.end(), [](auto& s) { return s.bf16; });
  std::vector<float> a(any_f32 ? na : 0, 0.01f), b(any_f32 ? nb : 0, 0.02f), c(nc, 0.0f),
      bias(nbias, 0.0f);
  std::vector<uint16_t> a16(any_bf16 ? na : 0, to_bf16_bits(0.01f)),
      b16(any_bf16 ? nb : 0, to_bf16_bits(0.02f));
  const auto start = std::chrono::steady_clock::now();
  for (const MatmulShape& s : shapes) {
    if (s.bf16)
      matmul_bf16(s, a16.data(), b16.data(), c.data(), bias.data());
    else
      matmul(s, a.data(), b.data(), c.data(), bias.data());
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

namespace {

/// C = bias or 0 (or unchanged when accumulating): the product of an empty inner dimension.
void empty_product(const MatmulShape& s, float* c, const float* bias) {
  if (s.accumulate) return;
  for (int64_t i = 0; i < s.batch * s.m * s.n; ++i) c[i] = bias ? bias[i % s.n] : 0.0f;
}

/// Appends s to the recorded shapes while a recording is on (the shape as the caller asked for it:
/// a bf16 product stays bf16 even where it is emulated).
void record(const MatmulShape& s) {
  if (!g_recording) return;
  std::lock_guard<std::mutex> lock(record_mutex());
  if (g_recording) recorded().push_back(s);
}

/// Runs the primitive of key (built on first use) on this thread, with this thread's stream and
/// scratchpad (grown once, reused).
void run_primitive(const PrimKey& key, const void* a, const void* b, float* c, const float* bias) {
  static PrimitiveCache<PrimKey, Cached, KeyHash> cache;
  const std::shared_ptr<const Cached> entry = cache.get(key, [&key] { return build(key); });
  auto& eng = cpu_engine();
  thread_local dnnl::stream stream(eng);
  thread_local std::vector<uint8_t> scratch;
  if (scratch.size() < entry->scratch_md.get_size()) scratch.resize(entry->scratch_md.get_size());
  memory a_mem(entry->a_md, eng, const_cast<void*>(a));
  memory b_mem(entry->b_md, eng, const_cast<void*>(b));
  memory c_mem(entry->c_md, eng, c);
  memory scratch_mem(entry->scratch_md, eng, scratch.data());
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, a_mem},
                                          {DNNL_ARG_WEIGHTS, b_mem},
                                          {DNNL_ARG_DST, c_mem},
                                          {DNNL_ARG_SCRATCHPAD, scratch_mem}};
  if (key.s.bias)
    args.emplace(DNNL_ARG_BIAS, memory(entry->bias_md, eng, const_cast<float*>(bias)));
  entry->prim.execute(stream, args);
  stream.wait();
}

/// Tile `index` of s under t (index runs over batch, then rows, then columns of C): its shape, its
/// operands' addresses and leading dimensions inside the whole product, run on this thread.
void run_tile(const MatmulShape& s, const MatmulTiling& t, int64_t index, const void* a,
              const void* b, float* c, const float* bias) {
  const int64_t per_matrix = t.row_tiles * t.col_tiles, bt = index / per_matrix;
  const int64_t r0 = (index % per_matrix) / t.col_tiles * t.rows;
  const int64_t c0 = (index % t.col_tiles) * t.cols;
  MatmulShape part = s;
  part.batch = 1;
  part.m = std::min(t.rows, s.m - r0);
  part.n = std::min(t.cols, s.n - c0);
  const bool row_cut = part.m != s.m, col_cut = part.n != s.n;
  const PrimKey key{part, s.trans_a && row_cut ? s.m : 0, !s.trans_b && col_cut ? s.n : 0,
                    col_cut ? s.n : 0};
  const int64_t elem = s.bf16 ? 2 : 4;
  const char* pa = static_cast<const char*>(a) + (bt * s.m * s.k + (s.trans_a ? r0 : r0 * s.k)) * elem;
  const char* pb = static_cast<const char*>(b) + (bt * s.k * s.n + (s.trans_b ? c0 * s.k : c0)) * elem;
  run_primitive(key, pa, pb, c + bt * s.m * s.n + r0 * s.n + c0, bias ? bias + c0 : nullptr);
}

/// Runs s on operands of its types as the tiles of matmul_tiling(s), each a single-threaded
/// primitive (one thread in force while it is made, so oneDNN plans it for one), in one OpenMP
/// region whose threads take the tiles in turn (inside another parallel region: every tile on the
/// calling thread). The tiles depend on the shape only, so C has the same bits on any thread count.
void execute(const MatmulShape& s, const void* a, const void* b, float* c, const float* bias) {
  const MatmulTiling t = matmul_tiling(s);
  const int64_t tiles = t.count();
  const int team = omp_in_parallel() ? 1 : static_cast<int>(std::min<int64_t>(tiles, omp_get_max_threads()));
  std::exception_ptr error;
#pragma omp parallel num_threads(team)
  {
    omp_set_num_threads(1);  // this thread's nested regions, and oneDNN's plan, use one
    for (int64_t i = omp_get_thread_num(); i < tiles; i += omp_get_num_threads()) {
      try {
        run_tile(s, t, i, a, b, c, bias);
      } catch (...) {
#pragma omp critical(tn_matmul_error)
        if (!error) error = std::current_exception();
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

/// Per-thread f32 copies of the two operands of an emulated bf16 product, grown once and reused
/// (no allocation per call once the largest shape has run).
struct F32Staging {
  std::vector<float> a, b;
};
F32Staging& f32_staging(int64_t na, int64_t nb) {
  thread_local F32Staging staging;
  if (static_cast<int64_t>(staging.a.size()) < na) staging.a.resize(na);
  if (static_cast<int64_t>(staging.b.size()) < nb) staging.b.resize(nb);
  return staging;
}

/// The emulated bf16 product: s run by the f32 primitive on the staged f32 operands.
void execute_emulated(MatmulShape s, const float* a32, const float* b32, float* c,
                      const float* bias) {
  s.bf16 = false;
  execute(s, a32, b32, c, bias);
}

}  // namespace

bool bf16_matmul_native() {
  static const bool native = [] {
    std::string impl;
    try {
      const memory::desc a_md({16, 16}, dt::bf16, memory::format_tag::ab);
      const memory::desc c_md({16, 16}, dt::f32, memory::format_tag::ab);
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, a_md, c_md), cpu_engine());
      impl = pd.impl_info_str();
    } catch (const dnnl::error&) {
      impl.clear();
    }
    const bool ok = !impl.empty() && impl.find("ref") == std::string::npos;
    if (!ok)
      spdlog::warn(
          "this CPU has no AVX-512 bf16 matmul in oneDNN{}: bf16 products are emulated in f32 (same "
          "rounding of the operands, no speed-up)",
          impl.empty() ? "" : " (only the reference kernel " + impl + ")");
    return ok;
  }();
  return native;
}

void matmul_bf16(const MatmulShape& s, const uint16_t* a, const uint16_t* b, float* c,
                 const float* bias) {
  if (!s.bf16) throw std::invalid_argument("matmul_bf16: shape.bf16 is not set");
  if (s.m == 0 || s.n == 0 || s.batch == 0) return;
  if (s.k == 0) return empty_product(s, c, bias);
  record(s);
  if (bf16_matmul_native()) return execute(s, a, b, c, bias);
  const int64_t na = s.batch * s.m * s.k, nb = s.batch * s.k * s.n;
  F32Staging& st = f32_staging(na, nb);
  bf16_widen_loop(a, st.a.data(), na);
  bf16_widen_loop(b, st.b.data(), nb);
  execute_emulated(s, st.a.data(), st.b.data(), c, bias);
}

void matmul(const MatmulShape& s, const float* a, const float* b, float* c, const float* bias) {
  if (s.m == 0 || s.n == 0 || s.batch == 0) return;
  if (s.k == 0) return empty_product(s, c, bias);
  record(s);
  if (!s.bf16) return execute(s, a, b, c, bias);
  const int64_t na = s.batch * s.m * s.k, nb = s.batch * s.k * s.n;
  if (!bf16_matmul_native()) {
    F32Staging& st = f32_staging(na, nb);
    bf16_round_trip_loop(a, st.a.data(), na);
    bf16_round_trip_loop(b, st.b.data(), nb);
    return execute_emulated(s, st.a.data(), st.b.data(), c, bias);
  }
  // Per-thread staging buffers, grown once and reused; layouts are kept as stored.
  thread_local std::vector<uint16_t> a16, b16;
  if (static_cast<int64_t>(a16.size()) < na) a16.resize(na);
  if (static_cast<int64_t>(b16.size()) < nb) b16.resize(nb);
  to_bf16_flat(a, a16.data(), na);
  to_bf16_flat(b, b16.data(), nb);
  execute(s, a16.data(), b16.data(), c, bias);
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
