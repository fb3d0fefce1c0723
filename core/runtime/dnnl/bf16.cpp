#include "core/runtime/dnnl/bf16.h"

#include <cstring>
#include <string>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "core/runtime/dnnl/engine.h"
#include "core/runtime/dnnl/primitive_cache.h"
#include "core/runtime/math/isa_clones.h"
#include "core/runtime/parallel.h"

namespace tn {

namespace {

#if defined(__x86_64__) && defined(__GNUC__)
/// round_to_bf16 with vcvtneps2bf16 (called only where the CPU has AVX512_BF16; the `_avx512bf16`
/// suffix is what scripts/check_portable.sh accepts outside the per-ISA clones): round to nearest even, subnormal inputs to a zero of their
/// sign, NaN kept quiet (Intel's convert_fp32_to_bfloat16), which is to_bf16_bits bit for bit.
/// With `scaled`, each value is multiplied by `scale` (in f32) before it is rounded.
template <bool scaled>
__attribute__((target("avx512f,avx512bf16"))) void round_avx512bf16(const float* src, float scale,
                                                                 uint16_t* dst, int64_t n) {
  const __m512 s = _mm512_set1_ps(scale);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 x = _mm512_loadu_ps(src + i);
    if constexpr (scaled) x = _mm512_mul_ps(x, s);
    const __m256bh y = _mm512_cvtneps_pbh(x);
    std::memcpy(dst + i, &y, sizeof y);
  }
  for (; i < n; ++i) dst[i] = to_bf16_bits(scaled ? src[i] * scale : src[i]);
}
#endif

TN_ISA_CLONES void round_portable(const float* __restrict src, float /*scale*/,
                                  uint16_t* __restrict dst, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) dst[i] = to_bf16_bits(src[i]);
}

TN_ISA_CLONES void round_portable_scaled(const float* __restrict src, float scale,
                                         uint16_t* __restrict dst, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) dst[i] = to_bf16_bits(src[i] * scale);
}

using RoundFn = void (*)(const float*, float, uint16_t*, int64_t);

/// round_avx512bf16 where the CPU has AVX512_BF16, else round_portable (round_portable_scaled
/// when `scaled`).
template <bool scaled>
RoundFn pick_round() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512bf16")) return round_avx512bf16<scaled>;
#endif
  return scaled ? round_portable_scaled : round_portable;
}

TN_ISA_CLONES void widen_span(const uint16_t* __restrict src, float* __restrict dst, int64_t begin,
                              int64_t end) {
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) dst[i] = from_bf16_bits(src[i]);
}

TN_ISA_CLONES void round_trip_span(const float* __restrict src, float* __restrict dst,
                                   int64_t begin, int64_t end) {
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) dst[i] = from_bf16_bits(to_bf16_bits(src[i]));
}

/// Whether oneDNN converts f32 to bf16 with a JIT kernel on this CPU (its generic `simple:any`
/// reorder, all it has without AVX-512, is many times slower than bf16_round_loop).
bool onednn_reorder_is_jit() {
  static const bool jit = [] {
    using dnnl::memory;
    const memory::desc from({64}, memory::data_type::f32, memory::format_tag::a);
    const memory::desc to({64}, memory::data_type::bf16, memory::format_tag::a);
    try {
      const dnnl::reorder::primitive_desc pd(cpu_engine(), from, cpu_engine(), to);
      return std::string(pd.impl_info_str()).find("jit") != std::string::npos;
    } catch (const dnnl::error&) {
      return false;  // no reorder at all: our loop
    }
  }();
  return jit;
}

}  // namespace

void round_to_bf16(const float* src, uint16_t* dst, int64_t n) {
  static const RoundFn fn = pick_round<false>();
  fn(src, 1.0f, dst, n);
}

void round_to_bf16_scaled(const float* src, float scale, uint16_t* dst, int64_t n) {
  static const RoundFn fn = pick_round<true>();
  fn(src, scale, dst, n);
}

void bf16_round_loop(const float* src, uint16_t* dst, int64_t n) {
  parallel_spans(n, kParallelMinElements, [&](int64_t b, int64_t e) { round_to_bf16(src + b, dst + b, e - b); });
}

void bf16_widen_loop(const uint16_t* src, float* dst, int64_t n) {
  parallel_spans(n, kParallelMinElements, [&](int64_t b, int64_t e) { widen_span(src, dst, b, e); });
}

void bf16_round_trip_loop(const float* src, float* dst, int64_t n) {
  parallel_spans(n, kParallelMinElements,
                 [&](int64_t b, int64_t e) { round_trip_span(src, dst, b, e); });
}

void to_bf16_flat(const float* src, uint16_t* dst, int64_t n) {
  if (n <= 0) return;
  if (!onednn_reorder_is_jit()) return bf16_round_loop(src, dst, n);
  using dnnl::memory;
  struct Entry {
    dnnl::reorder prim;
    memory::desc from, to;
  };
  static PrimitiveCache<int64_t, Entry> cache;
  const std::shared_ptr<const Entry> entry = cache.get(n, [n] {
    memory::desc from({n}, memory::data_type::f32, memory::format_tag::a);
    memory::desc to({n}, memory::data_type::bf16, memory::format_tag::a);
    dnnl::reorder::primitive_desc pd(cpu_engine(), from, cpu_engine(), to);
    return Entry{dnnl::reorder(pd), from, to};
  });
  memory from(entry->from, cpu_engine(), const_cast<float*>(src));
  memory to(entry->to, cpu_engine(), dst);
  entry->prim.execute(cpu_stream(), from, to);
  cpu_stream().wait();
}

std::shared_ptr<const Bf16Buffer> Bf16Buffer::copy_of(const float* src, int64_t n) {
  auto out = std::make_shared<Bf16Buffer>(n);
  to_bf16_flat(src, out->data(), n);
  return out;
}

}  // namespace tn
