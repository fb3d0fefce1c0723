#pragma once
// Dense matrix products through oneDNN's matmul primitive, created once per shape and reused.
#include <cstdint>
#include <vector>

#include "core/runtime/dnnl/bf16.h"

namespace tn {

/// Describes C = op(A) · op(B) (+ bias) (+ C when accumulate), batched over `batch` matrices.
/// A is stored [M,K] row-major, or [K,M] when trans_a; B is [K,N], or [N,K] when trans_b (a
/// PyTorch [out,in] Linear weight is B with trans_b). C is [M,N]. Batched operands are packed
/// back to back (stride M*K, K*N, M*N). bias (length N, broadcast over rows) may be null.
/// Build it with designated initializers, naming every flag that is set:
/// `MatmulShape{.m = rows, .n = out, .k = in, .trans_b = true}`.
struct MatmulShape {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  bool accumulate = false;  // C += product instead of C = product
  bool bias = false;
  bool bf16 = false;  // A and B in bfloat16 (AVX-512 BF16, else emulated); C and accumulation f32
  bool operator==(const MatmulShape&) const = default;
};

/// Whether oneDNN has a bf16 matmul kernel on this CPU (AVX-512 BF16 / AMX): decided once, by
/// creating a small bf16 primitive descriptor (a "ref" implementation counts as none). Where it
/// has none, every bf16 product is emulated exactly: the bf16 operands are widened to f32 (exact)
/// and multiplied by the f32 primitive (a product of two bf16 values is exact in f32, and
/// accumulation is f32 in both), so only the summation order differs from the native kernel; the
/// first call logs a warning once.
bool bf16_matmul_native();

/// Runs `shape` on raw pointers, f32 in and out, as the tiles of matmul_tiling(shape)
/// (core/runtime/dnnl/matmul_tiling.h): each tile of C a cached single-threaded primitive, the tiles shared
/// by the OpenMP threads. Deterministic: the same bits on any thread count (the tiles depend on the
/// shape only; K is never split). With shape.bf16 the
/// operands are first converted to bf16 (to_bf16_flat into per-thread staging buffers; where bf16
/// is emulated, rounded through bf16 in f32 staging buffers);
/// callers that reuse an operand should convert it once and call matmul_bf16. Throws dnnl::error
/// on failure.
void matmul(const MatmulShape& shape, const float* a, const float* b, float* c,
            const float* bias = nullptr);

/// The same product on operands already in bf16 (shape.bf16 must be set), stored in the layouts
/// `shape` describes (a transposed A stays transposed: oneDNN's brgemm reads it directly). C and
/// bias are f32.
void matmul_bf16(const MatmulShape& shape, const uint16_t* a, const uint16_t* b, float* c,
                 const float* bias = nullptr);

/// Shape recording (for `bench`): between begin and end, every product's shape is appended
/// to a list, so a step's matrix products can be replayed alone and timed.
void matmul_record_begin();
std::vector<MatmulShape> matmul_record_end();

/// Runs each shape once on scratch operands (bf16 shapes on bf16 scratch, so no conversion is
/// timed; where bf16 is emulated, the widening to f32 is part of the product and is timed) and
/// returns the seconds taken: the step's matrix products alone, through the same cached
/// primitives.
double matmul_replay_seconds(const std::vector<MatmulShape>& shapes);

/// Naive triple loop with double accumulation: the trusted reference for tests.
void matmul_naive(const MatmulShape& shape, const float* a, const float* b, float* c,
                  const float* bias = nullptr);

}  // namespace tn
