// Performer (FAVOR+) feature map: fast f32 forward/backward, double reference, orthogonal random
// features. Legend: B batch, T seq_len, H n_heads, D d_head, M features, c = D^(-1/4).
#include "layers/attention/kernels/performer_features.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/runtime/rng.h"
#include "core/runtime/math/isa_clones.h"
#include "core/runtime/math/row_max.h"
#include "layers/attention/kernels/kernel_utils.h"

namespace tn {
namespace {

using kernel_detail::dot;
using tn::exp_float;

void check_args(const char* op, const AttentionDims& dims, int64_t m, const void* features,
                const void* x, const void* out) {
  check_attention_dims_any_key(op, dims);
  kernel_detail::check_at_least(op, "m (features)", m, 1);
  if (dims.d_key != 0 && dims.d_key != m)
    throw ShapeError(std::string("[") + op + "] dims.d_key must be 0 or m = " + std::to_string(m) +
                     " (the width of phi), got " + std::to_string(dims.d_key));
  if (dims.batch * dims.seq_len * dims.n_heads == 0) return;
  kernel_detail::check_not_null(op, "features", features);
  kernel_detail::check_not_null(op, "x", x);
  kernel_detail::check_not_null(op, "output", out);
}

/// The constants of one call, in f32 as the reference computes them in float32 mode.
struct Consts {
  float c, half_c2, scale, eps;
  Consts(int64_t D, int64_t M, double feature_eps)
      : c(float(std::pow(double(D), -0.25))),
        half_c2(float(0.5 * std::pow(double(D), -0.5))),
        scale(float(1.0 / std::sqrt(double(M)))),
        eps(float(feature_eps)) {}
};

/// wt [H][D][M] = the features w [H][M][D] transposed per head, so a row's M projections are
/// one broadcast-FMA per d across contiguous lanes (no horizontal sums; the order over d is fixed,
/// so the bits do not depend on the vector width or the row's neighbours).
void transpose_features(const float* w, int64_t H, int64_t M, int64_t D, float* __restrict wt) {
  for (int64_t h = 0; h < H; ++h)
    for (int64_t r = 0; r < M; ++r)
      for (int64_t d = 0; d < D; ++d) wt[(h * D + d) * M + r] = w[(h * M + r) * D + d];
}

constexpr int64_t kBlock = 16;  // outputs per register block of project_row and backward_row

/// out[j] = Σ_i a[i]·rows[i·stride + j] for j < n (n ≤ kBlock), i in order; the sums stay in
/// registers (a fixed-size block) however long a is.
template <int64_t N>
inline void weighted_row_sum(const float* a, const float* rows, int64_t stride, int64_t count,
                             float* __restrict out) {
  float acc[N] = {};
  for (int64_t i = 0; i < count; ++i) {
    const float ai = a[i];
    const float* __restrict w = rows + i * stride;
#pragma omp simd
    for (int64_t j = 0; j < N; ++j) acc[j] += ai * w[j];
  }
  for (int64_t j = 0; j < N; ++j) out[j] = acc[j];
}

/// out[j] = Σ_i a[i]·rows[i·stride + j] for j < n, in blocks of kBlock columns (inlined into
/// each ISA clone of its callers).
inline void weighted_rows(const float* a, const float* rows, int64_t stride, int64_t count, int64_t n,
                   float* __restrict out) {
  int64_t j = 0;
  for (; j + kBlock <= n; j += kBlock) weighted_row_sum<kBlock>(a, rows + j, stride, count, out + j);
  for (; j < n; ++j) {
    float acc = 0.f;
    for (int64_t i = 0; i < count; ++i) acc += a[i] * rows[i * stride + j];
    out[j] = acc;
  }
}

/// proj[r] = Σ_d (c x_d)·wt[d][r] for r < M (the reference scales x first); returns 0.5·c²·‖x‖².
/// scratch: [D].
TN_ISA_CLONES
float project_row(const Consts& k, const float* x, const float* wt, int64_t D, int64_t M,
                  float* __restrict xs, float* __restrict proj) {
#pragma omp simd
  for (int64_t d = 0; d < D; ++d) xs[d] = x[d] * k.c;
  weighted_rows(xs, wt, M, D, M, proj);
  return dot(x, x, D) * k.half_c2;
}

/// In place: phi[r] = scale·exp((proj[r] − diag) − s) + eps.
TN_ISA_CLONES
void finish_row(const Consts& k, float diag, float s, float* __restrict phi, int64_t M) {
#pragma omp simd
  for (int64_t r = 0; r < M; ++r) phi[r] = k.scale * exp_float((phi[r] - diag) - s) + k.eps;
}

/// dx of one row from its features p = phi, their gradient gp and the row's projections w [M][D].
/// scratch: [M + D].
TN_ISA_CLONES void backward_row(const Consts& k, const float* xr, const float* p, const float* gp,
                                const float* w, int64_t D, int64_t M, float* scratch, float* dx) {
  float* __restrict g = scratch;  // [M] g_r, [D] Σ g_r w_r
  float* __restrict acc = g + M;
  // g_r = d_phi_r · (phi_r − eps) = d_phi_r · ∂phi_r/∂u_r, u_r = proj_r − diag − s.
#pragma omp simd
  for (int64_t r = 0; r < M; ++r) g[r] = gp[r] * (p[r] - k.eps);
  float g_sum = 0.f;
  for (int64_t r = 0; r < M; ++r) g_sum += g[r];
  weighted_rows(g, w, D, M, D, acc);
  const float c2 = 2.f * k.half_c2;
#pragma omp simd
  for (int64_t d = 0; d < D; ++d) dx[d] = k.c * acc[d] - c2 * g_sum * xr[d];
}

// ---- naive reference (double) ------------------------------------------------------------------

double naive_proj(const float* w, const double* x, double c, int64_t D) {
  double p = 0.0;
  for (int64_t d = 0; d < D; ++d) p += c * x[d] * double(w[d]);
  return p;
}

double naive_half_c2_norm2(const double* x, double c, int64_t D) {
  double n2 = 0.0;
  for (int64_t d = 0; d < D; ++d) n2 += x[d] * x[d];
  return 0.5 * c * c * n2;
}

}  // namespace

void performer_features_forward(const AttentionDims& dims, int64_t m, const float* features,
                                bool is_query, bool causal, const uint8_t* key_valid,
                                double feature_eps, const float* x, float* phi, float* stabiliser) {
  const char* op = "performer_features_forward";
  check_args(op, dims, m, features, x, phi);
  const int64_t B = dims.batch, T = dims.seq_len, H = dims.n_heads, D = dims.d_head, M = m;
  if (B * T * H == 0) return;
  kernel_detail::check_not_null(op, "stabiliser", stabiliser);
  const Consts k(D, M, feature_eps);

  const int64_t wt_floats = H * D * M;
  if (is_query || causal) {  // every row on its own
    const int64_t rows = B * T * H;
#pragma omp parallel
    {
      float* wt = kernel_detail::thread_scratch(size_t(wt_floats + D));
      transpose_features(features, H, M, D, wt);
#pragma omp for schedule(static)
      for (int64_t row = 0; row < rows; ++row) {
        float* p = phi + row * M;
        const float diag =
            project_row(k, x + row * D, wt + (row % H) * D * M, D, M, wt + wt_floats, p);
        const float s = is_query ? row_max(p, M) : 0.f;
        finish_row(k, diag, s, p, M);
        stabiliser[row] = s;
      }
    }
    return;
  }

  // Encoder keys: one shared stabiliser per (b, h) over its real positions. Pass 1 leaves the
  // projections in phi, pass 2 turns them into features (diag is recomputed, it is cheap).
#pragma omp parallel
  {
    float* wt = kernel_detail::thread_scratch(size_t(wt_floats + D));
    transpose_features(features, H, M, D, wt);
#pragma omp for collapse(2) schedule(static)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h) {
        const float* w = wt + h * D * M;
        float shared = -std::numeric_limits<float>::infinity();
        for (int64_t t = 0; t < T; ++t) {
          const int64_t row = (b * T + t) * H + h;
          project_row(k, x + row * D, w, D, M, wt + wt_floats, phi + row * M);
          if (!key_valid || key_valid[b * T + t])
            shared = std::max(shared, row_max(phi + row * M, M));
        }
        for (int64_t t = 0; t < T; ++t) {
          const int64_t row = (b * T + t) * H + h;
          float* p = phi + row * M;
          const float diag = dot(x + row * D, x + row * D, D) * k.half_c2;
          const float s = (!key_valid || key_valid[b * T + t]) ? shared : row_max(p, M);
          finish_row(k, diag, s, p, M);
          stabiliser[row] = s;
        }
      }
  }
}

void performer_features_backward(const AttentionDims& dims, int64_t m, const float* features,
                                 const float* x, const float* phi, double feature_eps,
                                 const float* d_phi, float* dx) {
  const char* op = "performer_features_backward";
  check_args(op, dims, m, features, x, dx);
  const int64_t B = dims.batch, T = dims.seq_len, H = dims.n_heads, D = dims.d_head, M = m;
  if (B * T * H == 0) return;
  kernel_detail::check_not_null(op, "phi", phi);
  kernel_detail::check_not_null(op, "d_phi", d_phi);
  const Consts k(D, M, feature_eps);
  const int64_t rows = B * T * H;
#pragma omp parallel for schedule(static)
  for (int64_t row = 0; row < rows; ++row)
    backward_row(k, x + row * D, phi + row * M, d_phi + row * M, features + (row % H) * M * D, D,
                 M, kernel_detail::thread_scratch(size_t(M + D)), dx + row * D);
}

void performer_features_fixed_naive(const AttentionDims& dims, int64_t m, const float* features,
                                    double feature_eps, const double* x, const double* stabiliser,
                                    double* phi) {
  check_args("performer_features_fixed_naive", dims, m, features, x, phi);
  const int64_t H = dims.n_heads, D = dims.d_head, M = m;
  const double c = std::pow(double(D), -0.25), scale = 1.0 / std::sqrt(double(M));
  for (int64_t row = 0; row < dims.batch * dims.seq_len * H; ++row) {
    const double* xr = x + row * D;
    const double diag = naive_half_c2_norm2(xr, c, D);
    for (int64_t r = 0; r < M; ++r) {
      const double u =
          naive_proj(features + ((row % H) * M + r) * D, xr, c, D) - diag - stabiliser[row];
      phi[row * M + r] = scale * std::exp(u) + feature_eps;
    }
  }
}

void performer_features_forward_naive(const AttentionDims& dims, int64_t m, const float* features,
                                      bool is_query, bool causal, const uint8_t* key_valid,
                                      double feature_eps, const double* x, double* phi,
                                      double* stabiliser) {
  const char* op = "performer_features_forward_naive";
  check_args(op, dims, m, features, x, phi);
  const int64_t B = dims.batch, T = dims.seq_len, H = dims.n_heads, D = dims.d_head, M = m;
  if (B * T * H == 0) return;
  kernel_detail::check_not_null(op, "stabiliser", stabiliser);
  const double c = std::pow(double(D), -0.25);
  auto max_proj = [&](int64_t b, int64_t t, int64_t h) {  // max_r (c x)·w_r
    double mx = -INFINITY;
    for (int64_t r = 0; r < M; ++r)
      mx =
          std::max(mx, naive_proj(features + (h * M + r) * D, x + ((b * T + t) * H + h) * D, c, D));
    return mx;
  };
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      double shared = -INFINITY;  // encoder keys: max over real positions
      if (!is_query && !causal)
        for (int64_t t = 0; t < T; ++t)
          if (!key_valid || key_valid[b * T + t]) shared = std::max(shared, max_proj(b, t, h));
      for (int64_t t = 0; t < T; ++t) {
        const bool real = !key_valid || key_valid[b * T + t];
        double s;
        if (is_query)
          s = max_proj(b, t, h);
        else if (causal)
          s = 0.0;
        else
          s = real ? shared : max_proj(b, t, h);
        stabiliser[(b * T + t) * H + h] = s;
      }
    }
  performer_features_fixed_naive(dims, m, features, feature_eps, x, stabiliser, phi);
}

void performer_features_backward_naive(const AttentionDims& dims, int64_t m, const float* features,
                                       const double* x, const double* stabiliser,
                                       const double* d_phi, double* dx) {
  check_args("performer_features_backward_naive", dims, m, features, x, dx);
  const int64_t H = dims.n_heads, D = dims.d_head, M = m;
  const double c = std::pow(double(D), -0.25), scale = 1.0 / std::sqrt(double(M));
  for (int64_t row = 0; row < dims.batch * dims.seq_len * H; ++row) {
    const double* xr = x + row * D;
    const double diag = naive_half_c2_norm2(xr, c, D);
    double* out = dx + row * D;
    std::fill(out, out + D, 0.0);
    for (int64_t r = 0; r < M; ++r) {
      const float* w = features + ((row % H) * M + r) * D;
      const double u = naive_proj(w, xr, c, D) - diag - stabiliser[row];
      const double g = d_phi[row * M + r] * scale * std::exp(u);
      for (int64_t d = 0; d < D; ++d) out[d] += g * (c * double(w[d]) - c * c * xr[d]);
    }
  }
}

void householder_qr_q(int64_t n, const double* a, double* q) {
  kernel_detail::check_at_least("householder_qr_q", "n", n, 1);
  std::vector<double> r(a, a + n * n), tau(size_t(n), 0.0);
  // dgeqr2: reflector i zeroes r[i+1.., i]; its vector is [1, r[i+1.., i]] (stored below the
  // diagonal), H_i = I − tau_i v vᵀ.
  for (int64_t i = 0; i < n; ++i) {
    double xnorm = 0.0;
    for (int64_t k = i + 1; k < n; ++k) xnorm = std::hypot(xnorm, r[k * n + i]);
    if (xnorm == 0.0) continue;  // dlarfg: tau = 0, H = I (also for the last, 1×1 column)
    const double alpha = r[i * n + i];
    const double beta = -std::copysign(std::hypot(alpha, xnorm), alpha);
    tau[size_t(i)] = (beta - alpha) / beta;
    const double inv = 1.0 / (alpha - beta);
    for (int64_t k = i + 1; k < n; ++k) r[k * n + i] *= inv;
    r[i * n + i] = beta;
    for (int64_t j = i + 1; j < n; ++j) {  // apply H_i to the remaining columns
      double w = r[i * n + j];
      for (int64_t k = i + 1; k < n; ++k) w += r[k * n + i] * r[k * n + j];
      w *= tau[size_t(i)];
      r[i * n + j] -= w;
      for (int64_t k = i + 1; k < n; ++k) r[k * n + j] -= w * r[k * n + i];
    }
  }
  // dorg2r: Q = H_0 H_1 ... H_{n-1} I, accumulated from the last reflector backwards.
  std::fill(q, q + n * n, 0.0);
  for (int64_t i = 0; i < n; ++i) q[i * n + i] = 1.0;
  for (int64_t i = n - 1; i >= 0; --i) {
    if (tau[size_t(i)] == 0.0) continue;
    for (int64_t j = 0; j < n; ++j) {  // column j of Q: rows i.. change
      double w = q[i * n + j];
      for (int64_t k = i + 1; k < n; ++k) w += r[k * n + i] * q[k * n + j];
      w *= tau[size_t(i)];
      q[i * n + j] -= w;
      for (int64_t k = i + 1; k < n; ++k) q[k * n + j] -= w * r[k * n + i];
    }
  }
}

std::vector<float> performer_orthogonal_features(int64_t n_heads, int64_t m, int64_t d_head,
                                                 uint64_t seed) {
  const char* op = "performer_orthogonal_features";
  kernel_detail::check_at_least(op, "n_heads", n_heads, 0);
  kernel_detail::check_at_least(op, "m", m, 1);
  kernel_detail::check_at_least(op, "d_head", d_head, 1);
  const int64_t M = m, D = d_head, blocks = (M + D - 1) / D;
  Rng rng(seed);
  std::vector<float> out(size_t(n_heads * M * D));
  std::vector<double> a(size_t(D * D)), q(size_t(D * D)), rows(size_t(blocks * D * D));
  for (int64_t h = 0; h < n_heads; ++h) {
    for (int64_t blk = 0; blk < blocks; ++blk) {
      for (double& v : a) v = rng.normal();  // torch.randn(d, d): row-major
      householder_qr_q(D, a.data(), q.data());
      for (int64_t i = 0; i < D; ++i)  // block row i = column i of Q (qm.t())
        for (int64_t j = 0; j < D; ++j) rows[size_t((blk * D + i) * D + j)] = q[size_t(j * D + i)];
    }
    for (int64_t r = 0; r < M; ++r) {  // torch.randn(m, d).norm(dim=1)
      double n2 = 0.0;
      for (int64_t j = 0; j < D; ++j) {
        const double g = rng.normal();
        n2 += g * g;
      }
      const double mult = std::sqrt(n2);
      for (int64_t j = 0; j < D; ++j)
        out[size_t((h * M + r) * D + j)] = float(mult * rows[size_t(r * D + j)]);
    }
  }
  return out;
}

}  // namespace tn
