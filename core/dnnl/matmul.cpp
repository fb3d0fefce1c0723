#include "core/dnnl/matmul.h"

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

#include "core/dnnl/engine.h"
#include "core/dnnl/primitive_cache.h"

namespace tn {
namespace {

using dnnl::memory;
using dt = memory::data_type;

/// A primitive's key: the product, and for one row block of a product split across the threads
/// (`matmul_split_parts`) the leading dimension of its transposed A (the whole product's m; 0 when
/// A is dense). Blocks of equal shape share a primitive: with a scratchpad the caller provides,
/// oneDNN lets threads run one primitive at the same time.
struct PrimKey {
  MatmulShape s;
  int64_t a_ld = 0;
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
                      key.a_ld})
      h = hash_mix(h, hash(v));
    return h;
  }
};

struct Cached {
  dnnl::matmul prim;
  memory::desc a_md, b_md, c_md, bias_md, scratch_md;
};

/// Logical [batch, rows, cols]; stored as [batch, cols, rows] when transposed, with `ld` (0: rows)
/// between the stored rows.
memory::desc matrix_desc(int64_t batch, int64_t rows, int64_t cols, bool transposed,
                         dt type = dt::f32, int64_t ld = 0) {
  memory::dims dims = {batch, rows, cols};
  const int64_t t_ld = ld > 0 ? ld : rows;
  memory::dims strides = transposed ? memory::dims{t_ld * cols, 1, t_ld}
                                    : memory::dims{rows * cols, cols, 1};
  return memory::desc(dims, type, strides);
}

/// The primitive for key, with a scratchpad the caller provides (scratchpad_mode::user): each
/// thread passes its own, so two parts of a product never share one.
Cached build(const PrimKey& key) {
  const MatmulShape& s = key.s;
  Cached c;
  const dt operand = s.bf16 ? dt::bf16 : dt::f32;
  c.a_md = matrix_desc(s.batch, s.m, s.k, s.trans_a, operand, key.a_ld);
  c.b_md = matrix_desc(s.batch, s.k, s.n, s.trans_b, operand);
  c.c_md = matrix_desc(s.batch, s.m, s.n, false);
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

constexpr int64_t kMinPartRows = 128;       // rows of C each thread gets at least, when split
constexpr double kMinSplitFlops = 1 << 24;  // smaller products run whole

}  // namespace

int matmul_split_parts(const MatmulShape& s) {
  if (s.batch != 1 || omp_in_parallel()) return 1;
  const int threads = omp_get_max_threads();
  if (threads < 2 || s.m < kMinPartRows * threads) return 1;
  return 2.0 * double(s.m) * double(s.n) * double(s.k) < kMinSplitFlops ? 1 : threads;
}

namespace {

/// Runs s on operands of its types: whole, or as matmul_split_parts(s) row blocks (multiples of
/// 16 rows) in one OpenMP region, each block a single-threaded primitive (one thread in force
/// while it is made, so oneDNN plans it for one); the threads the region really has take the
/// blocks in turn. A transposed A's block is the same memory read with the whole product's
/// leading dimension.
void execute(const MatmulShape& s, const void* a, const void* b, float* c, const float* bias) {
  const int parts = matmul_split_parts(s);
  if (parts == 1) return run_primitive(PrimKey{s}, a, b, c, bias);
  const int64_t rows = ((s.m + parts - 1) / parts + 15) & ~int64_t{15};
  const int64_t elem = s.bf16 ? 2 : 4;
  std::exception_ptr error;
#pragma omp parallel num_threads(parts)
  {
    omp_set_num_threads(1);  // this thread's nested regions, and oneDNN's plan, use one
    for (int blk = omp_get_thread_num(); blk < parts; blk += omp_get_num_threads()) {
      const int64_t r0 = std::min(s.m, blk * rows), r1 = std::min(s.m, r0 + rows);
      if (r1 <= r0) continue;
      try {
        MatmulShape part = s;
        part.m = r1 - r0;
        const char* pa = static_cast<const char*>(a) + (s.trans_a ? r0 : r0 * s.k) * elem;
        run_primitive(PrimKey{part, s.trans_a ? s.m : 0}, pa, b, c + r0 * s.n, bias);
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
