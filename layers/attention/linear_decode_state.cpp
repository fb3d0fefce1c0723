#include "layers/attention/linear_decode_state.h"

#include <algorithm>

#include "core/error.h"

namespace tn {

LinearDecodeState::LinearDecodeState(int64_t n_heads, int64_t d_key, int64_t d_head, bool with_den)
    : n_heads_(n_heads),
      d_key_(d_key),
      d_head_(d_head),
      with_den_(with_den),
      kv_state_(static_cast<size_t>(n_heads * d_key * d_head), 0.0),
      k_sum_(with_den ? static_cast<size_t>(n_heads * d_key) : 0, 0.0),
      acc_(static_cast<size_t>(d_head), 0.0) {}

void LinearDecodeState::step(const float* q, const float* k, const float* v, float* num,
                             float* den) {
  if (with_den_ != (den != nullptr))
    throw ShapeError(with_den_ ? "[LinearDecodeState::step] den must not be null: the state keeps k_sum"
                               : "[LinearDecodeState::step] den must be null: the state has no k_sum");
  const int64_t K = d_key_, D = d_head_;
  for (int64_t h = 0; h < n_heads_; ++h) {
    const float* qh = q + h * K;
    const float* kh = k + h * K;
    const float* vh = v + h * D;
    double* state = kv_state_.data() + h * K * D;
    // kv_state += k_tᵀ v_t
    for (int64_t a = 0; a < K; ++a) {
      const double ka = kh[a];
      double* row = state + a * D;
#pragma omp simd
      for (int64_t c = 0; c < D; ++c) row[c] += ka * static_cast<double>(vh[c]);
    }
    // num_t = q_t kv_state
    double* acc = acc_.data();
    std::fill(acc, acc + D, 0.0);
    for (int64_t a = 0; a < K; ++a) {
      const double qa = qh[a];
      const double* row = state + a * D;
#pragma omp simd
      for (int64_t c = 0; c < D; ++c) acc[c] += qa * row[c];
    }
    for (int64_t c = 0; c < D; ++c) num[h * D + c] = static_cast<float>(acc[c]);
    if (with_den_) {
      double* z = k_sum_.data() + h * K;
      double s = 0.0;
      for (int64_t a = 0; a < K; ++a) {
        z[a] += kh[a];
        s += static_cast<double>(qh[a]) * z[a];
      }
      den[h] = static_cast<float>(s);
    }
  }
}

int64_t LinearDecodeState::size_bytes() const {
  return static_cast<int64_t>((kv_state_.capacity() + k_sum_.capacity() + acc_.capacity()) * sizeof(double));
}

}  // namespace tn
