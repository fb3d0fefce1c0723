#pragma once
// bfloat16 copies of f32 values, for the `precision: bf16` matrix products (AVX-512 BF16 through
// oneDNN, emulated in f32 on CPUs without it: core/runtime/dnnl/matmul.h). Master weights, gradients and
// everything outside the products stay f32.
#include <bit>
#include <cstdint>
#include <memory>

#include "core/runtime/memory_pool.h"

namespace tn {

/// f32 → bf16 bits, rounding to nearest even, subnormals flushed to a zero of their sign: what
/// oneDNN's reorder and AVX512_BF16's vcvtneps2bf16 give (it treats subnormal inputs as zero), so
/// that every bf16 operand has the same bits whichever of them converts it, on every CPU. NaN
/// stays a (quiet) NaN.
inline uint16_t to_bf16_bits(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7f800000u) == 0) return static_cast<uint16_t>((u >> 16) & 0x8000u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/// bf16 bits → f32 (exact).
inline float from_bf16_bits(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

/// dst[i] = to_bf16_bits(src[i]) for i < n, on the calling thread (for a row or a chunk inside a
/// kernel's own span): with AVX512_BF16's vcvtneps2bf16 where the CPU has it (the same bits, 16
/// values an instruction; checked at the first call), else to_bf16_bits in a loop compiled per
/// instruction set. dst may not overlap src.
void round_to_bf16(const float* src, uint16_t* dst, int64_t n);
/// dst[i] = to_bf16_bits(src[i] · scale) (the product rounded to f32 first), as round_to_bf16.
void round_to_bf16_scaled(const float* src, float scale, uint16_t* dst, int64_t n);

/// f32 → bf16 (round to nearest even) of n contiguous values (the layout is kept: a transposed
/// operand stays transposed). Through a cached oneDNN reorder where oneDNN has a JIT kernel for it
/// (with AVX-512 here), else through bf16_round_loop: on an AVX2-only CPU oneDNN has only its generic
/// reorder (`simple:any`), which made the emulated bf16 ALM step spend seconds in conversions.
void to_bf16_flat(const float* src, uint16_t* dst, int64_t n);

/// dst = src rounded to bf16 bits (to_bf16_bits), n values, by round_to_bf16 (our loop compiled
/// per instruction set, core/runtime/math/isa_clones.h, or vcvtneps2bf16) in parallel spans.
void bf16_round_loop(const float* src, uint16_t* dst, int64_t n);
/// dst = src widened from bf16 to f32 (exact), n values, as bf16_round_loop.
void bf16_widen_loop(const uint16_t* src, float* dst, int64_t n);
/// dst = src rounded to bf16 and widened back (f32 values that bf16 holds exactly), n values
/// (dst may not overlap src).
void bf16_round_trip_loop(const float* src, float* dst, int64_t n);

/// n bf16 values in a pooled buffer (the tensor pool's size-keyed free lists, so a training step
/// that converts the same shapes every time does not allocate).
class Bf16Buffer {
 public:
  /// Uninitialised buffer of n values.
  explicit Bf16Buffer(int64_t n) : storage_((n + 1) / 2), size_(n) {}
  /// A converted copy of src[0, n).
  static std::shared_ptr<const Bf16Buffer> copy_of(const float* src, int64_t n);

  uint16_t* data() { return reinterpret_cast<uint16_t*>(storage_.ptr); }
  const uint16_t* data() const { return reinterpret_cast<const uint16_t*>(storage_.ptr); }
  int64_t size() const { return size_; }

 private:
  Storage storage_;
  int64_t size_;
};

}  // namespace tn
