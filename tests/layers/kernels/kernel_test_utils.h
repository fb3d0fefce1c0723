#pragma once
// Shared helpers for the attention kernel tests: random tensors, named comparisons that print the
// max-abs and relative-RMS error, bitwise row comparisons and central finite differences in double.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "layers/attention/kernels/attention_dims.h"

namespace tn::kernel_test {

inline std::vector<float> random_normal(size_t n, std::mt19937& gen, float scale = 1.f) {
  std::normal_distribution<float> normal(0.f, scale);
  std::vector<float> out(n);
  for (float& x : out) x = normal(gen);
  return out;
}

inline std::vector<double> to_double(const std::vector<float>& x) { return {x.begin(), x.end()}; }

/// Random q (scaled by 1/√d_head), k, v and upstream gradient for one attention kernel call, and
/// optionally a key-padding mask keeping each key with probability 0.7. Draw order: q, k, v, d_out,
/// then the mask.
struct AttentionCase {
  AttentionDims dims;
  std::vector<float> q, k, v, d_out;
  std::vector<uint8_t> valid;  // empty = no key_valid
  AttentionCase(AttentionDims d, std::mt19937& gen, bool with_mask) : dims(d) {
    const size_t n = size_t(attention_numel(d));
    q = random_normal(n, gen, 1.f / std::sqrt(float(d.d_head)));
    k = random_normal(n, gen);
    v = random_normal(n, gen);
    d_out = random_normal(n, gen);
    if (with_mask) {
      std::bernoulli_distribution keep(0.7);
      valid.resize(size_t(d.batch * d.seq_len));
      for (auto& x : valid) x = keep(gen);
    }
  }
  const uint8_t* key_valid() const { return valid.empty() ? nullptr : valid.data(); }
};

struct ErrorStats {
  double max_abs = 0;  // max |got - ref|
  double ref_max = 0;  // max |ref|
  double rel_rms = 0;  // ||got - ref||_2 / ||ref||_2
  double scaled() const { return max_abs / std::max(1.0, ref_max); }
};

template <class A, class B>
ErrorStats error_stats(const std::vector<A>& got, const std::vector<B>& ref) {
  ErrorStats s;
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double diff = std::abs(double(got[i]) - double(ref[i]));
    s.max_abs = std::isnan(diff) ? INFINITY : std::max(s.max_abs, diff);
    s.ref_max = std::max(s.ref_max, std::abs(double(ref[i])));
    num += diff * diff;
    den += double(ref[i]) * double(ref[i]);
  }
  s.rel_rms = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  return s;
}

/// CHECKs max|got − ref| / max(1, max|ref|) <= tol; on failure prints name, max-abs, relative-RMS
/// error.
template <class A, class B>
void check_close(const std::string& name, const std::vector<A>& got, const std::vector<B>& ref,
                 double tol) {
  REQUIRE(got.size() == ref.size());
  const ErrorStats s = error_stats(got, ref);
  CHECK_MESSAGE(s.scaled() <= tol, name << ": max-abs err " << s.max_abs << " (ref max "
                                        << s.ref_max << ", scaled " << s.scaled() << ", rel-RMS "
                                        << s.rel_rms << ") exceeds tol " << tol);
}

/// Rows [0, t] of every (b, h) are bit-identical between a and b ([B, T, H, width] layout).
inline bool rows_identical(const std::vector<float>& a, const std::vector<float>& b,
                           const AttentionDims& d, int64_t width, int64_t t) {
  for (int64_t bb = 0; bb < d.batch; ++bb) {
    const size_t off = size_t(bb * d.seq_len * d.n_heads * width);
    const size_t len = size_t((t + 1) * d.n_heads * width);
    if (std::memcmp(a.data() + off, b.data() + off, len * sizeof(float)) != 0) return false;
  }
  return true;
}

/// Adds noise to rows t+1.. of every batch element of x ([B, T, H, width] layout; width 0 means
/// d_head).
inline void perturb_after(std::vector<float>& x, const AttentionDims& d, int64_t t,
                          std::mt19937& gen, int64_t width = 0) {
  std::normal_distribution<float> normal(0.f, 3.f);
  const int64_t row = d.n_heads * (width > 0 ? width : d.d_head);
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t s = t + 1; s < d.seq_len; ++s)
      for (int64_t i = 0; i < row; ++i) x[size_t((b * d.seq_len + s) * row + i)] += normal(gen);
}

/// Central differences of loss() w.r.t. every entry of x (x is restored afterwards).
template <class Loss>
std::vector<double> finite_difference(std::vector<double>& x, Loss&& loss, double step = 1e-6) {
  std::vector<double> grad(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double saved = x[i];
    x[i] = saved + step;
    const double up = loss();
    x[i] = saved - step;
    const double down = loss();
    x[i] = saved;
    grad[i] = (up - down) / (2 * step);
  }
  return grad;
}

inline double weighted_sum(const std::vector<double>& w, const std::vector<double>& y) {
  double s = 0;
  for (size_t i = 0; i < y.size(); ++i) s += w[i] * y[i];
  return s;
}

}  // namespace tn::kernel_test
