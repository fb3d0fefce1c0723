#include "core/runtime/ops/batch_norm_block.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/runtime/math/isa_clones.h"
#include "core/runtime/parallel.h"

namespace tn {
namespace {

/// acc[j] = Σ over rows [r0, r1) of x[i, j] (center null) or of (x[i, j] − center[j])², in
/// float64, rows in order. Compiled per instruction set.
TN_ISA_CLONES void chunk_sums(const float* __restrict x, int64_t r0, int64_t r1, int64_t d,
                              const double* __restrict center, double* __restrict acc) {
  for (int64_t j = 0; j < d; ++j) acc[j] = 0.0;
  for (int64_t i = r0; i < r1; ++i) {
    const float* row = x + i * d;
    if (center) {
#pragma omp simd
      for (int64_t j = 0; j < d; ++j) {
        const double c = double(row[j]) - center[j];
        acc[j] += c * c;
      }
    } else {
#pragma omp simd
      for (int64_t j = 0; j < d; ++j) acc[j] += double(row[j]);
    }
  }
}

/// sum_g[j] = Σ dy and sum_gh[j] = Σ dy·x̂ over rows [r0, r1), x̂ = (x − mean) · rstd in float as
/// the forward forms it, in float64, rows in order. Compiled per instruction set.
TN_ISA_CLONES void chunk_grad_sums(const float* __restrict x, const float* __restrict dy,
                                   int64_t r0, int64_t r1, int64_t d, const float* __restrict mean,
                                   const float* __restrict rstd, double* __restrict sum_g,
                                   double* __restrict sum_gh) {
  for (int64_t j = 0; j < d; ++j) sum_g[j] = sum_gh[j] = 0.0;
  for (int64_t i = r0; i < r1; ++i) {
#pragma omp simd
    for (int64_t j = 0; j < d; ++j) {
      const float g = dy[i * d + j], xhat = (x[i * d + j] - mean[j]) * rstd[j];
      sum_g[j] += double(g);
      sum_gh[j] += double(g) * double(xhat);
    }
  }
}

/// y = (x − mean) · scale + shift over rows [r0, r1). Compiled per instruction set.
TN_ISA_CLONES void normalize_rows(const float* x, int64_t r0, int64_t r1, int64_t d,
                                  const float* __restrict mean, const float* __restrict scale,
                                  const float* __restrict shift, float* y) {
  for (int64_t i = r0; i < r1; ++i)
#pragma omp simd
    for (int64_t j = 0; j < d; ++j) y[i * d + j] = (x[i * d + j] - mean[j]) * scale[j] + shift[j];
}

/// dx = scale · (dy − mg − x̂ · mgh) over rows [r0, r1) (mg, mgh null: scale · dy). Compiled per
/// instruction set.
TN_ISA_CLONES void dx_rows(const float* __restrict x, const float* dy, int64_t r0, int64_t r1,
                           int64_t d, const float* __restrict mean, const float* __restrict rstd,
                           const float* __restrict scale, const float* __restrict mg,
                           const float* __restrict mgh, float* dx) {
  for (int64_t i = r0; i < r1; ++i) {
    if (!mg) {
#pragma omp simd
      for (int64_t j = 0; j < d; ++j) dx[i * d + j] = scale[j] * dy[i * d + j];
      continue;
    }
#pragma omp simd
    for (int64_t j = 0; j < d; ++j) {
      const float xhat = (x[i * d + j] - mean[j]) * rstd[j];
      dx[i * d + j] = scale[j] * (dy[i * d + j] - mg[j] - xhat * mgh[j]);
    }
  }
}

int64_t chunk_count(int64_t n) { return (n + kBatchNormChunkRows - 1) / kBatchNormChunkRows; }

/// Runs fn(chunk, r0, r1, partial) over the fixed chunks of n rows (in parallel when there are
/// several), each with its own `width` doubles of `partials`, then adds the partials in chunk
/// order into total [width].
template <class Fn>
void chunked_sums(int64_t n, int64_t width, std::vector<double>& total, Fn&& fn) {
  const int64_t chunks = chunk_count(n);
  std::vector<double> partials(static_cast<size_t>(chunks * width));
#pragma omp parallel for schedule(static) if (chunks > 1 && n * width > kParallelMinElements)
  for (int64_t c = 0; c < chunks; ++c)
    fn(c * kBatchNormChunkRows, std::min(n, (c + 1) * kBatchNormChunkRows), partials.data() + c * width);
  total.assign(static_cast<size_t>(width), 0.0);
  for (int64_t c = 0; c < chunks; ++c)
    for (int64_t j = 0; j < width; ++j) total[j] += partials[c * width + j];
}

std::vector<float> rstd_of(const float* var, int64_t d, float eps) {
  std::vector<float> rstd(static_cast<size_t>(d));
  for (int64_t j = 0; j < d; ++j) rstd[j] = static_cast<float>(1.0 / std::sqrt(double(var[j]) + eps));
  return rstd;
}

}  // namespace

void batch_norm_block_stats(const float* x, int64_t n, int64_t d, float* mean, float* var) {
  std::vector<double> sum, mean64(static_cast<size_t>(d));
  chunked_sums(n, d, sum, [&](int64_t r0, int64_t r1, double* acc) { chunk_sums(x, r0, r1, d, nullptr, acc); });
  for (int64_t j = 0; j < d; ++j) mean64[j] = sum[j] / double(n);
  chunked_sums(n, d, sum, [&](int64_t r0, int64_t r1, double* acc) { chunk_sums(x, r0, r1, d, mean64.data(), acc); });
  for (int64_t j = 0; j < d; ++j) {
    mean[j] = static_cast<float>(mean64[j]);
    var[j] = static_cast<float>(sum[j] / double(n));
  }
}

void batch_norm_block_normalize(const float* x, int64_t n, int64_t d, const float* mean,
                                const float* var, float eps, const float* weight,
                                const float* bias, float* y) {
  std::vector<float> scale = rstd_of(var, d, eps), shift(static_cast<size_t>(d), 0.f);
  for (int64_t j = 0; j < d; ++j) {
    if (weight) scale[j] *= weight[j];
    if (bias) shift[j] = bias[j];
  }
  parallel_spans(n, parallel_min_rows(d), [&](int64_t r0, int64_t r1) {
    normalize_rows(x, r0, r1, d, mean, scale.data(), shift.data(), y);
  });
}

void batch_norm_block_backward(const float* x, const float* dy, int64_t n, int64_t d,
                               const float* mean, const float* var, float eps,
                               const float* weight, bool batch_stats, float* dx, float* dweight,
                               float* dbias) {
  const std::vector<float> rstd = rstd_of(var, d, eps);
  std::vector<double> sums;  // Σ dy [d], then Σ dy·x̂ [d]
  chunked_sums(n, 2 * d, sums, [&](int64_t r0, int64_t r1, double* acc) {
    chunk_grad_sums(x, dy, r0, r1, d, mean, rstd.data(), acc, acc + d);
  });
  std::vector<float> scale(rstd), mg(static_cast<size_t>(d)), mgh(static_cast<size_t>(d));
  for (int64_t j = 0; j < d; ++j) {
    if (weight) scale[j] *= weight[j];
    if (dbias) dbias[j] = static_cast<float>(sums[j]);
    if (dweight) dweight[j] = static_cast<float>(sums[d + j]);
    mg[j] = static_cast<float>(sums[j] / double(n));
    mgh[j] = static_cast<float>(sums[d + j] / double(n));
  }
  parallel_spans(n, parallel_min_rows(d), [&](int64_t r0, int64_t r1) {
    dx_rows(x, dy, r0, r1, d, mean, rstd.data(), scale.data(), batch_stats ? mg.data() : nullptr,
            batch_stats ? mgh.data() : nullptr, dx);
  });
}

}  // namespace tn
