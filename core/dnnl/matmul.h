#pragma once
// Dense matrix products through oneDNN's matmul primitive, created once per shape and reused.
#include <cstdint>
#include <vector>

namespace tn {

/// Describes C = op(A) · op(B) (+ bias) (+ C when accumulate), batched over `batch` matrices.
/// A is stored [M,K] row-major, or [K,M] when trans_a; B is [K,N], or [N,K] when trans_b (a
/// PyTorch [out,in] Linear weight is B with trans_b). C is [M,N]. Batched operands are packed
/// back to back (stride M*K, K*N, M*N). bias (length N, broadcast over rows) may be null.
struct MatmulShape {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  bool accumulate = false;  // C += product instead of C = product
  bool bias = false;
  bool bf16 = false;  // round A and B to bfloat16 (AVX-512 BF16), accumulate and write C in f32
  bool operator==(const MatmulShape&) const = default;
};

/// Runs the cached primitive for `shape` on raw pointers (f32 in and out; with shape.bf16 the
/// operands are converted to bf16 by a cached oneDNN reorder first). Throws dnnl::error on failure.
/// b_bf16 (optional, with shape.bf16): B already converted by to_bf16_flat, so the conversion is
/// skipped (e.g. the LM-head weight, converted once per step and used by every chunk).
void matmul(const MatmulShape& shape, const float* a, const float* b, float* c,
            const float* bias = nullptr, const uint16_t* b_bf16 = nullptr);

/// f32 → bf16 (round to nearest even) of n contiguous values, through a cached oneDNN reorder.
void to_bf16_flat(const float* src, uint16_t* dst, int64_t n);

/// Shape recording (for `bench`): between begin and end, every matmul() call's shape is appended
/// to a list, so a step's matrix products can be replayed alone and timed.
void matmul_record_begin();
std::vector<MatmulShape> matmul_record_end();

/// Runs each shape once on scratch operands and returns the seconds taken (the step's matrix
/// products alone, through the same cached primitives).
double matmul_replay_seconds(const std::vector<MatmulShape>& shapes);

/// Naive triple loop with double accumulation: the trusted reference for tests.
void matmul_naive(const MatmulShape& shape, const float* a, const float* b, float* c,
                  const float* bias = nullptr);

}  // namespace tn
