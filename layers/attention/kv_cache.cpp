#include "layers/attention/kv_cache.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace tn {

KvCache::KvCache(int64_t n_heads, int64_t d_head, int64_t capacity)
    : n_heads_(n_heads), d_head_(d_head), acc_(static_cast<size_t>(d_head)) {
  // Reserved up to kMaxReservedRows: a larger block (a checkpoint's block_size of 2^62) grows as
  // rows arrive, and capacity · width never overflows.
  capacity = std::clamp<int64_t>(capacity, 0, kMaxReservedRows);
  const size_t floats = static_cast<size_t>(capacity * n_heads * d_head);
  k_.reserve(floats);
  v_.reserve(floats);
  scores_.reserve(static_cast<size_t>(capacity));
}

void KvCache::clear() {
  k_.clear();
  v_.clear();
  rows_ = 0;
}

void KvCache::append(const float* k, const float* v) {
  const int64_t width = n_heads_ * d_head_;
  k_.insert(k_.end(), k, k + width);
  v_.insert(v_.end(), v, v + width);
  ++rows_;
  if (static_cast<int64_t>(scores_.size()) < rows_) scores_.resize(static_cast<size_t>(rows_));
}

void KvCache::attend(const float* q, DiagInnerKind inner, float* out) const {
  if (rows_ == 0) throw ShapeError("[KvCache::attend] the cache is empty: append the current row first");
  const int64_t D = d_head_, width = n_heads_ * d_head_;
  double* scores = scores_.data();
  double* acc = acc_.data();
  for (int64_t h = 0; h < n_heads_; ++h) {
    const float* qh = q + h * D;
    for (int64_t j = 0; j < rows_; ++j) {
      const float* kj = k_.data() + j * width + h * D;
      double s = 0.0;
      for (int64_t c = 0; c < D; ++c) s += static_cast<double>(qh[c]) * kj[c];
      scores[j] = s;
    }
    if (inner == DiagInnerKind::Relu) {
      for (int64_t j = 0; j < rows_; ++j) scores[j] = std::max(scores[j], 0.0);
    } else {
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < rows_; ++j) mx = std::max(mx, scores[j]);
      double sum = 0.0;
      for (int64_t j = 0; j < rows_; ++j) sum += (scores[j] = std::exp(scores[j] - mx));
      for (int64_t j = 0; j < rows_; ++j) scores[j] /= sum;
    }
    std::fill(acc, acc + D, 0.0);
    for (int64_t j = 0; j < rows_; ++j) {
      const float* vj = v_.data() + j * width + h * D;
      const double a = scores[j];
      if (a == 0.0) continue;
#pragma omp simd
      for (int64_t c = 0; c < D; ++c) acc[c] += a * vj[c];
    }
    for (int64_t c = 0; c < D; ++c) out[h * D + c] = static_cast<float>(acc[c]);
  }
}

int64_t KvCache::size_bytes() const {
  return static_cast<int64_t>((k_.capacity() + v_.capacity()) * sizeof(float) +
                              (scores_.capacity() + acc_.capacity()) * sizeof(double));
}

}  // namespace tn
