#pragma once
// A KV cache for decoding softmax-style attention one token at a time (batch 1): the k and v rows
// of the keys a new query may see (after projections, 1/√d_head on q, and relative PE), and the
// attention of one query row over them, per head:
//   L_j = q·k_j,   relu: A_j = relu(L_j)   softmax: A_j = exp(L_j − max L) / Σ exp(L − max L)
//   out = Σ_j A_j v_j                    (j over every cached row; causality is the caller's order)
// the row t of kernels/diag_attention.h and kernels/softmax_attention.h when the cache holds the
// keys j ≤ t of t's block (DiagAttention: cleared at each block start, so at most block_size rows)
// or of the whole prefix (SoftmaxAttention). Computed in double. Cost O(rows·n_heads·d_head).
#include <cstdint>
#include <vector>

#include "layers/attention/kernels/diag_attention.h"
#include "layers/module/module.h"

namespace tn {

class KvCache : public DecodeState {
 public:
  /// The most rows reserved up front; a cache grows past them as rows arrive.
  static constexpr int64_t kMaxReservedRows = 4096;
  /// capacity: rows reserved up front (at most kMaxReservedRows); the cache never reallocates
  /// while rows ≤ the rows reserved (DiagAttention reserves block_size rows, so for blocks up to
  /// kMaxReservedRows its size never changes).
  KvCache(int64_t n_heads, int64_t d_head, int64_t capacity);

  /// Forgets every row, keeping the reserved memory.
  void clear();
  /// Appends one row: k, v [n_heads·d_head].
  void append(const float* k, const float* v);
  /// Cached rows.
  int64_t rows() const { return rows_; }
  /// out [n_heads·d_head] = Σ_j A_j v_j per head, q [n_heads·d_head]. ShapeError when empty.
  void attend(const float* q, DiagInnerKind inner, float* out) const;

  int64_t size_bytes() const override;

 private:
  int64_t n_heads_, d_head_, rows_ = 0;
  std::vector<float> k_, v_;               // [rows, n_heads·d_head]
  mutable std::vector<double> scores_;     // [rows] scratch
  mutable std::vector<double> acc_;        // [d_head] scratch
};

}  // namespace tn
