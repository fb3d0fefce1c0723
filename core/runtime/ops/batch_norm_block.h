#pragma once
// The arithmetic of BatchNorm on a contiguous block of N rows of d features (core/runtime/ops/batch_norm.h
// gathers the real rows of a padded batch into such a block). Deterministic: every per-feature sum
// runs in float64 over fixed chunks of rows (kBatchNormChunkRows), each chunk's rows in order, and
// the chunks' sums are added in chunk order, so the statistics and the parameters' gradients have
// the same bits on any thread count; the element-wise passes compute each element alone. (oneDNN's
// batch_normalization primitive splits its sums across the threads: its bits follow the count.)
#include <cstdint>

namespace tn {

/// Rows per partial sum: a function of nothing but this constant, never of the thread count.
inline constexpr int64_t kBatchNormChunkRows = 512;

/// mean[j] and biased var[j] of column j of x [n, d] (n >= 1): two passes, the mean, then the mean
/// of the squared deviations from it, both summed in float64 and rounded to float at the end.
void batch_norm_block_stats(const float* x, int64_t n, int64_t d, float* mean, float* var);

/// y = (x − mean) · rstd · weight + bias per element, rstd = 1 / √(var + eps) per feature
/// (weight, bias: [d] or null for 1 and 0). x, y: [n, d]; y may alias x.
void batch_norm_block_normalize(const float* x, int64_t n, int64_t d, const float* mean,
                                const float* var, float eps, const float* weight,
                                const float* bias, float* y);

/// The backward of batch_norm_block_normalize for upstream dy [n, d], x̂ = (x − mean) · rstd:
/// dweight = Σ dy·x̂ and dbias = Σ dy (written, not added; either may be null), and dx = weight ·
/// rstd · (dy − Σ dy / n − x̂ · Σ dy·x̂ / n) when batch_stats (mean and var were the block's own
/// statistics), else weight · rstd · dy (given statistics: constants). dx [n, d] may alias dy.
void batch_norm_block_backward(const float* x, const float* dy, int64_t n, int64_t d,
                               const float* mean, const float* var, float eps,
                               const float* weight, bool batch_stats, float* dx, float* dweight,
                               float* dbias);

}  // namespace tn
