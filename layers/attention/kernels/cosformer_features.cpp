// cosFormer re-weighting: fast f32 forward/backward and the double reference. Legend: B batch,
// T seq_len, H n_heads, D d_head, M_b real length of sequence b.
#include "layers/attention/kernels/cosformer_features.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "layers/attention/kernels/kernel_utils.h"

namespace tn {
namespace {

constexpr double kHalfPi = 1.57079632679489661923;

void check_args(const char* op, const AttentionDims& dims, const int64_t* lengths, const void* in,
                const void* out) {
  check_attention_dims_any_key(op, dims);
  if (dims.d_key != 0 && dims.d_key != 2 * dims.d_head)
    throw ShapeError(std::string("[") + op +
                     "] dims.d_key must be 0 or 2·d_head = " + std::to_string(2 * dims.d_head) +
                     " (the width of y), got " + std::to_string(dims.d_key));
  if (lengths)
    for (int64_t b = 0; b < dims.batch; ++b)
      if (lengths[b] < 0 || lengths[b] > dims.seq_len)
        throw ShapeError(std::string("[") + op + "] lengths[" + std::to_string(b) +
                         "] = " + std::to_string(lengths[b]) +
                         " is outside [0, seq_len = " + std::to_string(dims.seq_len) + "]");
  if (dims.batch * dims.seq_len * dims.n_heads == 0) return;
  kernel_detail::check_not_null(op, "x", in);
  kernel_detail::check_not_null(op, "output", out);
}

/// Length of sequence b (T when lengths is null).
inline int64_t length_of(const int64_t* lengths, int64_t b, int64_t T) {
  return lengths ? lengths[b] : T;
}

/// sin and cos of a_i = (π/2)·(t+1)/M in f32: the angle rounded to f32 first (the reference casts
/// the float64 angle to the input dtype), then correctly rounded trigonometry.
inline void angle_f32(int64_t t, int64_t M, float& s, float& c) {
  const float a = float(kHalfPi * double(t + 1) / double(M));
  s = float(std::sin(double(a)));
  c = float(std::cos(double(a)));
}

}  // namespace

void cosformer_features_forward(const AttentionDims& dims, const int64_t* lengths, const float* x,
                                float* y) {
  check_args("cosformer_features_forward", dims, lengths, x, y);
  const int64_t B = dims.batch, T = dims.seq_len, H = dims.n_heads, D = dims.d_head;
#pragma omp parallel for collapse(2) schedule(static) if (B * T * H * D > 16384)
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) {
      const int64_t M = length_of(lengths, b, T);
      float* __restrict yr = y + (b * T + t) * H * 2 * D;
      if (t >= M) {
        kernel_detail::fill_zero(yr, H * 2 * D);
        continue;
      }
      float s, c;
      angle_f32(t, M, s, c);
      const float* __restrict xr = x + (b * T + t) * H * D;
      for (int64_t h = 0; h < H; ++h) {
        const float* __restrict xh = xr + h * D;
        float* __restrict yh = yr + h * 2 * D;
#pragma omp simd
        for (int64_t d = 0; d < D; ++d) {
          const float r = xh[d] > 0.f ? xh[d] : 0.f;
          yh[d] = r * s;
          yh[D + d] = r * c;
        }
      }
    }
}

void cosformer_features_backward(const AttentionDims& dims, const int64_t* lengths, const float* x,
                                 const float* dy, float* dx) {
  check_args("cosformer_features_backward", dims, lengths, x, dx);
  const int64_t B = dims.batch, T = dims.seq_len, H = dims.n_heads, D = dims.d_head;
  if (B * T * H > 0) kernel_detail::check_not_null("cosformer_features_backward", "dy", dy);
#pragma omp parallel for collapse(2) schedule(static) if (B * T * H * D > 16384)
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) {
      const int64_t M = length_of(lengths, b, T);
      float* __restrict dxr = dx + (b * T + t) * H * D;
      if (t >= M) {
        kernel_detail::fill_zero(dxr, H * D);
        continue;
      }
      float s, c;
      angle_f32(t, M, s, c);
      const float* __restrict xr = x + (b * T + t) * H * D;
      for (int64_t h = 0; h < H; ++h) {
        const float* __restrict xh = xr + h * D;
        const float* __restrict gh = dy + (b * T + t) * H * 2 * D + h * 2 * D;
        float* __restrict dh = dxr + h * D;
#pragma omp simd
        for (int64_t d = 0; d < D; ++d) dh[d] = xh[d] > 0.f ? gh[d] * s + gh[D + d] * c : 0.f;
      }
    }
}

void cosformer_features_forward_naive(const AttentionDims& dims, const int64_t* lengths,
                                      const double* x, double* y) {
  check_args("cosformer_features_forward_naive", dims, lengths, x, y);
  const int64_t T = dims.seq_len, H = dims.n_heads, D = dims.d_head;
  for (int64_t b = 0; b < dims.batch; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < H; ++h) {
        const int64_t M = length_of(lengths, b, T);
        const int64_t row = (b * T + t) * H + h;
        const double a = t < M ? kHalfPi * double(t + 1) / double(M) : 0.0;
        for (int64_t d = 0; d < D; ++d) {
          const double r = t < M ? std::max(x[row * D + d], 0.0) : 0.0;
          y[row * 2 * D + d] = r * std::sin(a);
          y[row * 2 * D + D + d] = r * std::cos(a);
        }
      }
}

void cosformer_features_backward_naive(const AttentionDims& dims, const int64_t* lengths,
                                       const double* x, const double* dy, double* dx) {
  check_args("cosformer_features_backward_naive", dims, lengths, x, dx);
  const int64_t T = dims.seq_len, H = dims.n_heads, D = dims.d_head;
  for (int64_t b = 0; b < dims.batch; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < H; ++h) {
        const int64_t M = length_of(lengths, b, T);
        const int64_t row = (b * T + t) * H + h;
        const double a = kHalfPi * double(t + 1) / double(M);
        for (int64_t d = 0; d < D; ++d) {
          const bool active = t < M && x[row * D + d] > 0.0;
          dx[row * D + d] =
              active ? dy[row * 2 * D + d] * std::sin(a) + dy[row * 2 * D + D + d] * std::cos(a)
                     : 0.0;
        }
      }
}

}  // namespace tn
