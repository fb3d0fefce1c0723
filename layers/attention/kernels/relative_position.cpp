// URPE / RoPE: fast form parallel over (batch, position) rows, naive per-element reference.
// Legend: B batch, T seq_len, H n_heads, D d_head, M = D/2 rotation pairs.
#include "layers/attention/kernels/relative_position.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/runtime/math/isa_clones.h"
#include "core/runtime/tensor.h"
#include "layers/attention/kernels/kernel_utils.h"

namespace tn {
namespace {

constexpr int64_t kThetaChunkRows = 64;  // (b, t) rows per partial sum of d_theta

using kernel_detail::dot;

void check_args(const char* op, const AttentionDims& dims, int64_t period, int64_t offset,
                const void* theta, const void* x) {
  check_attention_dims(op, dims);
  if (dims.d_head % 2 != 0)
    throw ShapeError(std::string("[") + op + "] d_head must be even for rotary pairs, got " +
                     std::to_string(dims.d_head));
  kernel_detail::check_at_least(op, "period", period, 0);
  kernel_detail::check_at_least(op, "offset", offset, 0);
  if (attention_numel(dims) == 0) return;
  kernel_detail::check_not_null(op, "theta", theta);
  kernel_detail::check_not_null(op, "x", x);
}

/// The encoded position of row t: offset + t, or (offset + t) % period.
inline int64_t position(int64_t t, int64_t period, int64_t offset) {
  const int64_t pos = offset + t;
  return period > 0 ? pos % period : pos;
}

/// cos/sin of float(pos)·theta[m] (the f32 angle the reference forms), evaluated in double and
/// rounded.
inline void angles(int64_t pos, const float* theta, int64_t M, float* cs, float* sn) {
  for (int64_t m = 0; m < M; ++m) {
    const float a = float(pos) * theta[m];
    cs[m] = float(std::cos(double(a)));
    sn[m] = float(std::sin(double(a)));
  }
}

/// The angles of every position of a call, computed once rather than once per (batch, position)
/// row: row t of the [T, 2M] table holds cos then sin of position(t)·theta.
Tensor angle_table(int64_t T, int64_t period, int64_t offset, const float* theta, int64_t M) {
  Tensor table = Tensor::empty({T, 2 * M});
  float* p = table.data();
#pragma omp parallel for schedule(static) if (T * M > 4096)
  for (int64_t t = 0; t < T; ++t)
    angles(position(t, period, offset), theta, M, p + t * 2 * M, p + t * 2 * M + M);
  return table;
}

/// u = x − 2 (x·v) v, or u = x when v is null.
inline void reflect(const float* __restrict x, const float* __restrict v, int64_t D,
                    float* __restrict u) {
  if (!v) {
    for (int64_t d = 0; d < D; ++d) u[d] = x[d];
    return;
  }
  const float s2 = 2.f * dot(x, v, D);
#pragma omp simd
  for (int64_t d = 0; d < D; ++d) u[d] = x[d] - s2 * v[d];
}

inline void rotate(const float* __restrict u, const float* __restrict cs,
                   const float* __restrict sn, int64_t M, float* __restrict y) {
#pragma omp simd
  for (int64_t m = 0; m < M; ++m) {
    const float u0 = u[2 * m], u1 = u[2 * m + 1];
    y[2 * m] = u0 * cs[m] - u1 * sn[m];
    y[2 * m + 1] = u1 * cs[m] + u0 * sn[m];
  }
}

/// The H heads of one (b, t) row: y_h = Rot(t) (I − 2vvᵀ) x_h. u: scratch [D].
TN_ISA_CLONES void forward_row(const float* x, const float* householder, int64_t H, int64_t D,
                               const float* cs, const float* sn, float* u, float* y) {
  for (int64_t h = 0; h < H; ++h) {
    reflect(x + h * D, householder, D, u);
    rotate(u, cs, sn, D / 2, y + h * D);
  }
}

/// The H heads of one (b, t) row backward: dx_h = (I − 2vvᵀ) Rotᵀ dy_h, and, when mine is not
/// null, mine[m] += pos · ∂(y·dy)/∂(pos θ_m) in double. scratch: [2D].
TN_ISA_CLONES void backward_row(const float* x, const float* dy, const float* householder,
                                int64_t H, int64_t D, int64_t pos, const float* cs, const float* sn,
                                float* scratch, float* dx, double* mine) {
  const int64_t M = D / 2;
  float* __restrict u = scratch;
  float* __restrict dz = scratch + D;
  for (int64_t h = 0; h < H; ++h) {
    const float* __restrict g = dy + h * D;
    // dz = Rotᵀ dy
#pragma omp simd
    for (int64_t m = 0; m < M; ++m) {
      dz[2 * m] = g[2 * m] * cs[m] + g[2 * m + 1] * sn[m];
      dz[2 * m + 1] = g[2 * m + 1] * cs[m] - g[2 * m] * sn[m];
    }
    reflect(dz, householder, D, dx + h * D);  // (I − 2vvᵀ) is its own transpose
    if (!mine || pos == 0) continue;
    reflect(x + h * D, householder, D, u);
    for (int64_t m = 0; m < M; ++m) {
      const float y0 = u[2 * m] * cs[m] - u[2 * m + 1] * sn[m];
      const float y1 = u[2 * m + 1] * cs[m] + u[2 * m] * sn[m];
      mine[m] += double(pos) * (double(y0) * g[2 * m + 1] - double(y1) * g[2 * m]);
    }
  }
}

template <class Real>
void forward_naive(const AttentionDims& dims, const Real* theta, const Real* householder,
                   int64_t period, int64_t offset, const Real* x, Real* y) {
  const int64_t T = dims.seq_len, H = dims.n_heads, D = dims.d_head;
  std::vector<double> u(D);
  for (int64_t b = 0; b < dims.batch; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < H; ++h) {
        const Real* xr = x + ((b * T + t) * H + h) * D;
        Real* yr = y + ((b * T + t) * H + h) * D;
        double s = 0.0;
        if (householder)
          for (int64_t d = 0; d < D; ++d) s += double(xr[d]) * double(householder[d]);
        for (int64_t d = 0; d < D; ++d)
          u[d] = double(xr[d]) - (householder ? 2.0 * s * double(householder[d]) : 0.0);
        const int64_t pos = position(t, period, offset);
        for (int64_t m = 0; m < D / 2; ++m) {
          const double a =
              double(Real(pos) * theta[m]);  // float angle for Real = float, as the fast form
          yr[2 * m] = Real(u[2 * m] * std::cos(a) - u[2 * m + 1] * std::sin(a));
          yr[2 * m + 1] = Real(u[2 * m + 1] * std::cos(a) + u[2 * m] * std::sin(a));
        }
      }
}

}  // namespace

void relative_position_forward(const AttentionDims& dims, const float* theta,
                               const float* householder, int64_t period, const float* x, float* y,
                               int64_t offset) {
  check_args("relative_position_forward", dims, period, offset, theta, x);
  const int64_t B = dims.batch, T = dims.seq_len, H = dims.n_heads, D = dims.d_head, M = D / 2;
  if (attention_numel(dims) == 0) return;
  const Tensor table = angle_table(T, period, offset, theta, M);
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) {
      const float* cs = table.data() + t * 2 * M;
      const int64_t off = (b * T + t) * H * D;
      forward_row(x + off, householder, H, D, cs, cs + M, kernel_detail::thread_scratch(size_t(D)),
                  y + off);
    }
}

void relative_position_backward(const AttentionDims& dims, const float* theta,
                                const float* householder, int64_t period, const float* x,
                                const float* dy, float* dx, float* d_theta, int64_t offset) {
  check_args("relative_position_backward", dims, period, offset, theta, x);
  const int64_t B = dims.batch, T = dims.seq_len, H = dims.n_heads, D = dims.d_head, M = D / 2;
  if (attention_numel(dims) == 0) return;
  // d_theta's partial sums over fixed chunks of kThetaChunkRows (b, t) rows, each chunk's rows in
  // order, the chunks then added in order: the same bits on any thread count.
  const int64_t rows = B * T, chunks = (rows + kThetaChunkRows - 1) / kThetaChunkRows;
  std::vector<double> partial(d_theta ? size_t(chunks) * size_t(M) : 0, 0.0);
  const Tensor table = angle_table(T, period, offset, theta, M);
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    double* mine = d_theta ? partial.data() + size_t(c) * size_t(M) : nullptr;
    for (int64_t r = c * kThetaChunkRows; r < std::min(rows, (c + 1) * kThetaChunkRows); ++r) {
      const int64_t t = r % T;
      const float* cs = table.data() + t * 2 * M;
      backward_row(x + r * H * D, dy + r * H * D, householder, H, D, position(t, period, offset), cs,
                   cs + M, kernel_detail::thread_scratch(size_t(2 * D)), dx + r * H * D, mine);
    }
  }
  if (d_theta)
    for (int64_t m = 0; m < M; ++m) {
      double s = 0.0;
      for (int64_t c = 0; c < chunks; ++c) s += partial[size_t(c) * size_t(M) + size_t(m)];
      d_theta[m] += float(s);
    }
}

void relative_position_forward_naive(const AttentionDims& dims, const float* theta,
                                     const float* householder, int64_t period, const float* x,
                                     float* y, int64_t offset) {
  check_args("relative_position_forward_naive", dims, period, offset, theta, x);
  forward_naive(dims, theta, householder, period, offset, x, y);
}

void relative_position_forward_naive(const AttentionDims& dims, const double* theta,
                                     const double* householder, int64_t period, const double* x,
                                     double* y, int64_t offset) {
  check_args("relative_position_forward_naive", dims, period, offset, theta, x);
  forward_naive(dims, theta, householder, period, offset, x, y);
}

}  // namespace tn
